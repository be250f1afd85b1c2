// A page setting kept in the URL's query string, so a view can be shared
// or reloaded as it was: reading falls back to the default for values
// outside the allowed set; writing replaces the history entry.
import { computed, type WritableComputedRef } from 'vue'
import { useRoute, useRouter } from 'vue-router'

export function useQueryParam<T extends string>(name: string, allowed: readonly T[], fallback: T): WritableComputedRef<T> {
  const route = useRoute()
  const router = useRouter()
  return computed<T>({
    get() {
      const v = route.query[name]
      return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : fallback
    },
    set(v: T) {
      void router.replace({ query: { ...route.query, [name]: v === fallback ? undefined : v } })
    },
  })
}

/** A free-text query value ('' when absent). */
export function useQueryText(name: string): WritableComputedRef<string> {
  const route = useRoute()
  const router = useRouter()
  return computed<string>({
    get() {
      const v = route.query[name]
      return typeof v === 'string' ? v : ''
    },
    set(v: string) {
      void router.replace({ query: { ...route.query, [name]: v || undefined } })
    },
  })
}

/** Replaces several query values at once (empty ones are removed). */
export function useQueryPatch(): (patch: Record<string, string>) => void {
  const route = useRoute()
  const router = useRouter()
  return (patch) => {
    const q: Record<string, string | undefined> = {}
    for (const [k, v] of Object.entries({ ...route.query })) if (typeof v === 'string') q[k] = v
    for (const [k, v] of Object.entries(patch)) q[k] = v || undefined
    void router.replace({ query: q })
  }
}
