import { beforeEach, expect, test, vi } from 'vitest'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { createMemoryHistory, createRouter } from 'vue-router'
import SafeText from '../src/components/SafeText.vue'
import RelTime from '../src/components/RelTime.vue'
import LoginView from '../src/views/LoginView.vue'
import { useSession } from '../src/stores/session'

beforeEach(() => {
  setActivePinia(createPinia())
  vi.unstubAllGlobals()
})

test('SafeText renders markup as text and bidi controls as markers', () => {
  const w = mount(SafeText, { props: { text: '<img src=x onerror=alert(1)>\u202Eexe' } })
  expect(w.find('img').exists()).toBe(false)
  expect(w.text()).toBe('<img src=x onerror=alert(1)>U+202Eexe')
  expect(w.find('.ctl').text()).toBe('U+202E')
  expect(w.find('bdi').attributes('title')).toBe('<img src=x onerror=alert(1)>\u202Eexe')
})

test('RelTime shows the absolute time on hover', () => {
  const w = mount(RelTime, { props: { ts: 1_700_000_000 } })
  expect(w.find('time').attributes('title')).toBe('2023-11-14 22:13:20')
  expect(w.find('time').attributes('datetime')).toBe('2023-11-14T22:13:20.000Z')
})

async function mountLogin(sso: boolean) {
  const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/login', component: LoginView }, { path: '/live', component: { template: '<div/>' } }] })
  await router.push('/login')
  const s = useSession()
  s.apply({ required: true, authenticated: false, sso, multi_site: false, exposed: false })
  const w = mount(LoginView, { global: { plugins: [router] } })
  return { w, router }
}

test('the login page shows the SSO button only when SSO is configured', async () => {
  expect((await mountLogin(false)).w.find('a[href="/api/auth/oidc/login"]').exists()).toBe(false)
  const { w } = await mountLogin(true)
  expect(w.find('a[href="/api/auth/oidc/login"]').text()).toContain('single sign-on')
})

test('the login page shows the 429 wait and disables the button', async () => {
  vi.stubGlobal(
    'fetch',
    vi.fn(async () => new Response(JSON.stringify({ error: 'too many' }), { status: 429, headers: { 'Retry-After': '60' } })),
  )
  const { w } = await mountLogin(false)
  await w.find('#login-pass').setValue('secret')
  await w.find('form').trigger('submit')
  await flushPromises()
  expect(w.find('[role="alert"]').text()).toContain('Try again in 60 s')
  expect(w.find('button[type="submit"]').attributes('disabled')).toBeDefined()
  expect(w.find('button[type="submit"]').text()).toMatch(/Wait \d+ s/)
})
