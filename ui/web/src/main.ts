import { createApp } from 'vue'
import { createPinia } from 'pinia'
import App from './App.vue'
import { makeRouter } from './router'
import { setUnauthorizedHandler } from './api/client'
import { chunkFailed, isChunkLoadError } from './lib/chunks'
import { useSession } from './stores/session'
import { useTheme } from './stores/theme'
import './styles/base.css'

const app = createApp(App)
const pinia = createPinia()
app.use(pinia)
const router = makeRouter()
app.use(router)

useTheme().init()

// A 401 from a protected call: the session ended (logout elsewhere,
// password change, expiry). Go to the sign-in page and come back after.
setUnauthorizedHandler(() => {
  const session = useSession()
  session.expire()
  const here = router.currentRoute.value
  if (here.name !== 'login') void router.push({ name: 'login', query: { next: here.fullPath, expired: '1' } })
})

// A chunk of an older build (the hub was upgraded) or a dropped network:
// offer a reload into the page the person was opening.
router.onError((err, to) => {
  if (isChunkLoadError(err)) chunkFailed(to.fullPath)
})
// Vite reports the failure first (vite:preloadError); the event is left
// to run its course so the import still rejects and the router's onError
// above replaces the target with the page being opened.
window.addEventListener('vite:preloadError', () => {
  chunkFailed(router.currentRoute.value.fullPath)
})

app.mount('#app')
