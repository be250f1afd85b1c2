// Client-side pagination: every table of the console shows a bounded page
// of its rows (an agent page once grew to 20 000 px of connections).
import { computed, ref, watch, type Ref } from 'vue'

export const PAGE_SIZE = 25

export interface Paged<T> {
  page: Ref<number>
  pages: Ref<number>
  rows: Ref<T[]>
  total: Ref<number>
  /** "26–50 of 312" */
  range: Ref<string>
}

/** A page of rows; the page number stays within range as rows change. */
export function usePaged<T>(all: Ref<T[]>, size = PAGE_SIZE): Paged<T> {
  const page = ref(1)
  const total = computed(() => all.value.length)
  const pages = computed(() => Math.max(1, Math.ceil(total.value / size)))
  watch(pages, (n) => {
    if (page.value > n) page.value = n
  })
  const rows = computed(() => all.value.slice((page.value - 1) * size, page.value * size))
  const range = computed(() => {
    if (!total.value) return '0 of 0'
    const from = (page.value - 1) * size + 1
    return `${from}–${Math.min(total.value, page.value * size)} of ${total.value}`
  })
  return { page, pages, rows, total, range }
}
