// Whether the hub runs the assistant (GET /api/v1/ai/status), asked once
// and shared by the navigation and the pages that offer the assistant. A
// hub without the route (older, or the call fails) counts as off: the
// console then shows nothing of the assistant.
import { computed, ref, watch } from 'vue'
import { get } from '../api/client'
// types only: the calls of api/ai.ts stay in the assistant's lazy chunks
import type { AIStatus } from '../api/ai'
import { useSession } from '../stores/session'

const status = ref<AIStatus | null>(null)
let pending: Promise<AIStatus> | null = null

/** Asks the hub (again when force); never throws. */
export function loadAIStatus(force = false): Promise<AIStatus> {
  if (pending && !force) return pending
  pending = get<AIStatus>('/api/v1/ai/status').then(
    (s) => (status.value = s ?? { enabled: false }),
    () => (status.value = { enabled: false }),
  )
  return pending
}

/** Forgets the answers (tests). */
export function resetAIStatus(): void {
  status.value = null
  pending = null
}

/**
 * The status and whether this user may converse (the analyze
 * permission); the status is asked only for such a user.
 */
export function useAIStatus() {
  const session = useSession()
  const canAsk = computed(() => session.can('analyze'))
  watch(
    canAsk,
    (v) => {
      if (v && !pending) void loadAIStatus()
    },
    { immediate: true },
  )
  return {
    status,
    /** the assistant is on and this user may use it */
    usable: computed(() => canAsk.value && !!status.value?.enabled),
  }
}
