// A script chunk that fails to load (the hub was upgraded while the page
// stayed open, so the old build's chunk names are gone and answer 404, or
// the network dropped mid-navigation) leaves the router stuck. The console
// notices both ways it surfaces — the router's error and Vite's
// vite:preloadError event — and offers a reload of the page the person
// was going to, instead of failing silently.
import { ref } from 'vue'

/** The path to reload into, once a chunk failed to load ('' otherwise). */
export const reloadTarget = ref('')

/** Whether err is a failed dynamic import of a console chunk. */
export function isChunkLoadError(err: unknown): boolean {
  const msg = err instanceof Error ? `${err.name} ${err.message}` : String(err)
  return /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed|Unable to preload CSS|ChunkLoadError/i.test(msg)
}

/** Records a chunk-load failure on the way to path. */
export function chunkFailed(path: string): void {
  reloadTarget.value = path || '/'
}
