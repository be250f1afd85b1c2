// Whether the hub can place addresses (GET /api/v1/geo/status), asked
// once per page load: the "no GeoIP database" notes use the hub's word
// instead of guessing from empty countries.
import { ref, type Ref } from 'vue'
import { get } from '../api/client'
import type { GeoStatus } from '../api/types'

let cached: Promise<GeoStatus | null> | null = null

export function useGeoStatus(): Ref<GeoStatus | null> {
  const out = ref<GeoStatus | null>(null)
  if (!cached) {
    cached = get<GeoStatus>('/api/v1/geo/status').catch(() => {
      cached = null // asked again on the next page
      return null
    })
  }
  void cached.then((s) => (out.value = s))
  return out
}
