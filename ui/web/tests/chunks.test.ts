import { describe, expect, test } from 'vitest'
import { chunkFailed, isChunkLoadError, reloadTarget } from '../src/lib/chunks'

describe('chunk-load failures', () => {
  test.each([
    ['Chromium', new TypeError('Failed to fetch dynamically imported module: http://hub/assets/FlowsView-old.js'), true],
    ['Firefox', new TypeError('error loading dynamically imported module: http://hub/assets/x.js'), true],
    ['Safari', new TypeError('Importing a module script failed.'), true],
    ['Vite CSS preload', new Error('Unable to preload CSS for /assets/x.css'), true],
    ['an API error is not one', new Error('request failed with HTTP 500'), false],
    ['a string', 'boom', false],
  ])('%s', (_, err, want) => {
    expect(isChunkLoadError(err)).toBe(want)
  })

  test('the failure keeps the path to reload into', () => {
    expect(reloadTarget.value).toBe('')
    chunkFailed('/flows?window=1h')
    expect(reloadTarget.value).toBe('/flows?window=1h')
    chunkFailed('')
    expect(reloadTarget.value).toBe('/')
  })
})
