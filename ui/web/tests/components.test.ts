import { beforeEach, expect, test, vi } from 'vitest'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { createMemoryHistory, createRouter } from 'vue-router'
import SafeText from '../src/components/SafeText.vue'
import RelTime from '../src/components/RelTime.vue'
import AbsTime from '../src/components/AbsTime.vue'
import { zoneLabel } from '../src/lib/time'
import LoginView from '../src/views/LoginView.vue'
import { RBAC_KEY, useSession } from '../src/stores/session'
import ShareBars from '../src/components/ShareBars.vue'
import Pager from '../src/components/Pager.vue'

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

test('RelTime shows the absolute time and its zone on hover', () => {
  const w = mount(RelTime, { props: { ts: 1_700_000_000 } })
  expect(w.find('time').attributes('title')).toBe(`2023-11-14 22:13:20 ${zoneLabel(1_700_000_000)}`)
  expect(w.find('time').attributes('datetime')).toBe('2023-11-14T22:13:20.000Z')
})

test('AbsTime (tables) shows the absolute 24-hour time, the relative one and the zone on hover', () => {
  const ts = Math.floor(Date.now() / 1000) - 300
  const w = mount(AbsTime, { props: { ts } })
  expect(w.find('time').text()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/)
  expect(w.find('time').attributes('title')).toBe(`5 min ago · ${zoneLabel(ts)}`)
  expect(mount(AbsTime, { props: { ts: 0 } }).find('time').text()).toBe('never')
})

async function mountLogin(sso: boolean) {
  const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/login', component: LoginView }, { path: '/live', component: { template: '<div/>' } }] })
  await router.push('/login')
  const s = useSession()
  s.apply({ required: true, authenticated: false, sso, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: [], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'] })
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

test('the login page: the bootstrap password refused under RBAC is named, the hint goes, and a username is then required', async () => {
  localStorage.removeItem(RBAC_KEY)
  const fetchMock = vi.fn(async () => new Response(JSON.stringify({ error: 'RBAC is enabled: the legacy password is disabled while an enabled admin user exists; sign in with a username and password' }), { status: 401 }))
  vi.stubGlobal('fetch', fetchMock)
  const { w } = await mountLogin(false)
  expect(w.find('[data-testid="bootstrap-hint"]').exists()).toBe(true)
  await w.find('#login-pass').setValue('bootstrap')
  await w.find('form').trigger('submit')
  await flushPromises()
  expect(w.find('[role="alert"]').text()).toContain('The bootstrap password is disabled because RBAC users exist')
  expect(w.find('[role="alert"]').text()).not.toMatch(/wrong/i)
  expect(w.find('[data-testid="bootstrap-hint"]').exists()).toBe(false)
  // a second try without a username does not reach the hub
  await w.find('form').trigger('submit')
  await flushPromises()
  expect(fetchMock).toHaveBeenCalledTimes(1)
  expect(w.find('[role="alert"]').text()).toContain('Enter your username.')
  // a later visit remembers
  expect((await mountLogin(false)).w.find('[data-testid="bootstrap-hint"]').exists()).toBe(false)
  localStorage.removeItem(RBAC_KEY)
})

test('ShareBars: bars scaled to the largest, shares of the total, names through the label slot', () => {
  const w = mount(ShareBars, {
    props: { items: [{ key: 'a', value: 300 }, { key: 'b', value: 100 }], format: (v: number) => `${v} B`, label: 'test' },
    slots: { label: '<template #label="{ item }"><a class="lbl">{{ item.key }}</a></template>' },
  })
  const rows = w.findAll('li')
  expect(rows).toHaveLength(2)
  expect(rows[0].find('.lbl').text()).toBe('a')
  expect(rows[0].find('.share-pct').text()).toBe('75.0%')
  expect(rows[1].find('.share-pct').text()).toBe('25.0%')
  expect((rows[0].find('.share-bar').element as HTMLElement).style.width).toBe('100%')
  expect((rows[1].find('.share-bar').element as HTMLElement).style.width).toMatch(/^33\.3/)
})

test('Pager: hidden on one page; previous and next move within range', async () => {
  expect(mount(Pager, { props: { modelValue: 1, pages: 1, range: '1–3 of 3', label: 'X' } }).find('nav').exists()).toBe(false)
  const w = mount(Pager, { props: { modelValue: 1, pages: 3, range: '1–25 of 60', label: 'X', 'onUpdate:modelValue': (v: number) => w.setProps({ modelValue: v }) } })
  expect(w.find('nav').attributes('aria-label')).toBe('X pages')
  const [first, prev, next] = w.findAll('button')
  expect(prev.attributes('disabled')).toBeDefined()
  expect(first.attributes('disabled')).toBeDefined()
  await next.trigger('click')
  expect(w.props('modelValue')).toBe(2)
  await w.findAll('button')[3].trigger('click') // Last
  expect(w.props('modelValue')).toBe(3)
  expect(w.findAll('button')[2].attributes('disabled')).toBeDefined() // Next
})
