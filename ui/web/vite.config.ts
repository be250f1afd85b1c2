import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'

// The hub the development server proxies /api and /ws to (run it with -dev).
const hub = process.env.NETMON_HUB ?? 'http://127.0.0.1:8080'

export default defineConfig({
  plugins: [vue()],
  base: '/',
  build: {
    // The Go package ui embeds ../dist; scripts/clean-dist.mjs empties it
    // first but keeps .keep, which go:embed needs when npm never ran.
    outDir: '../dist',
    emptyOutDir: false,
    target: 'es2022',
    sourcemap: false,
    // No inline <script> or data: module preloads: the hub's CSP is
    // script-src 'self'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 800,
    rollupOptions: {
      output: {
        manualChunks(id) {
          if (id.includes('node_modules/uplot')) return 'uplot'
          // the Geo page's country shapes: loaded only when the page opens
          if (id.includes('node_modules/world-atlas') || id.includes('node_modules/topojson-client')) return 'worldmap'
          if (id.includes('node_modules/')) return 'vendor'
          return undefined
        },
      },
    },
  },
  server: {
    port: 5173,
    strictPort: true,
    proxy: {
      '/api': { target: hub, changeOrigin: false },
      '/ws': { target: hub, ws: true, changeOrigin: false },
      '/healthz': { target: hub },
    },
  },
})
