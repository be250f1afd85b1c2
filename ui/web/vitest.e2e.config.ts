import { defineConfig } from 'vitest/config'

// End-to-end suite: real Chromium (/usr/bin/chromium, driven by
// playwright-core) against a real hub binary started by each file.
export default defineConfig({
  test: {
    environment: 'node',
    include: ['e2e/**/*.e2e.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
})
