import { defineConfig } from 'vitest/config'
import vue from '@vitejs/plugin-vue'

process.env.TZ = 'UTC'

export default defineConfig({
  plugins: [vue()],
  test: {
    environment: 'happy-dom',
    include: ['tests/**/*.test.ts'],
    restoreMocks: true,
  },
})
