import { createApp } from 'vue'
import { createPinia } from 'pinia'
import App from './App.vue'
import { makeRouter } from './router'
import { setUnauthorizedHandler } from './api/client'
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

app.mount('#app')
