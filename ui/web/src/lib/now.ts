// One shared clock ref that ticks every 5 s, for relative times.
import { ref, type Ref } from 'vue'

let clock: Ref<number> | null = null

export function useNow(): Ref<number> {
  if (!clock) {
    clock = ref(Date.now())
    if (typeof window !== 'undefined') {
      const c = clock
      window.setInterval(() => {
        c.value = Date.now()
      }, 5000)
    }
  }
  return clock
}
