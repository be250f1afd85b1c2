// Pages built against the spec before the hub serves their API (agents,
// enroll tokens): rendered here from the spec's field names.
import { beforeEach, expect, test, vi } from 'vitest'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { createMemoryHistory, createRouter } from 'vue-router'
import AgentsView from '../src/views/AgentsView.vue'
import EnrollTokensView from '../src/views/admin/EnrollTokensView.vue'
import { useSession } from '../src/stores/session'

function router() {
  return createRouter({ history: createMemoryHistory(), routes: [{ path: '/:p(.*)*', component: { template: '<div/>' } }] })
}

function respond(routes: Record<string, (init?: RequestInit) => unknown>) {
  const calls: { url: string; init?: RequestInit }[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      calls.push({ url, init })
      const h = routes[`${init?.method ?? 'GET'} ${url.split('?')[0]}`]
      if (!h) return new Response(JSON.stringify({ error: 'not found' }), { status: 404 })
      return new Response(JSON.stringify(h(init)), { status: 200 })
    }),
  )
  return calls
}

beforeEach(() => {
  setActivePinia(createPinia())
  useSession().apply({ required: true, authenticated: true, sso: false, multi_site: false, user: { username: 'a', role: 'admin', site: '', actor_type: 'user' } })
  vi.unstubAllGlobals()
})

test('agents: the list shows state, summed rates, connections and the attribution method', async () => {
  respond({
    'GET /api/v1/agents': () => [
      {
        id: 7, name: 'web-01', site: 'hq', online: true, last_seen: Math.floor(Date.now() / 1000) - 20, version: '1.4.2', remote_ip: '10.0.0.7',
        attr_method: 'pcap', attr_iface: 'eth0', attr_note: '', conns: 42,
        rates: [
          { name: 'eth0', rx_bps: 1_500_000, tx_bps: 250_000, pps: 10, rx_bytes: 1, tx_bytes: 1, rx_packets: 1, tx_packets: 1 },
          { name: 'eth1', rx_bps: 500_000, tx_bps: 0, pps: 1, rx_bytes: 1, tx_bytes: 1, rx_packets: 1, tx_packets: 1 },
        ],
      },
      { id: 8, name: '<b>db</b>', site: '', online: false, last_seen: 0, version: '1.4.0', remote_ip: '10.0.0.8', attr_method: 'off', attr_note: 'no BTF', conns: 0, rates: null },
    ],
  })
  const w = mount(AgentsView, { global: { plugins: [router()] } })
  await flushPromises()
  const text = w.find('[data-testid="agents-table"]').text()
  expect(text).toContain('web-01')
  expect(text).toContain('online')
  expect(text).toContain('2.00 Mbit/s') // 1.5 + 0.5 Mbit/s received
  expect(text).toContain('250 kbit/s')
  expect(text).toContain('pcap on eth0')
  expect(text).toContain('42')
  expect(text).toContain('<b>db</b>')
  expect(w.find('b').exists()).toBe(false)
  expect(w.find('a[href="/agents/7"]').exists()).toBe(true)
  w.unmount()
})

test('agents: an empty fleet, and a hub without the agent API, show an empty state', async () => {
  respond({ 'GET /api/v1/agents': () => [] })
  let w = mount(AgentsView, { global: { plugins: [router()] } })
  await flushPromises()
  expect(w.find('[data-testid="agents-empty"]').text()).toContain('No agents have enrolled yet')
  w.unmount()
  respond({})
  w = mount(AgentsView, { global: { plugins: [router()] } })
  await flushPromises()
  expect(w.find('[data-testid="agents-empty"]').text()).toContain('does not offer the agent API yet')
  w.unmount()
})

test('enroll tokens: create sends the spec body and shows the token once', async () => {
  const calls = respond({
    'GET /api/v1/enroll-tokens': () => [
      { id: 1, name: 'old', site: '', created_at: 1, expires_at: 0, last_used: 0, revoked: true },
      { id: 2, name: 'lab', site: 'hq', created_at: 1, expires_at: Math.floor(Date.now() / 1000) + 86400, last_used: 0, revoked: false, max_uses: 1, uses: 0, allowed_cidrs: ['10.0.0.0/8'] },
    ],
    'POST /api/v1/enroll-tokens': () => ({ ok: true, id: 3, token: 'ent_secret' }),
  })
  const w = mount(EnrollTokensView, { global: { plugins: [router()] } })
  await flushPromises()
  const table = w.find('[data-testid="enroll-table"]').text()
  expect(table).toContain('revoked')
  expect(table).toContain('active')
  expect(table).toContain('10.0.0.0/8')
  await w.find('#ne-name').setValue('branch')
  await w.find('#ne-site').setValue('hq')
  await w.find('#ne-exp').setValue('-1')
  await w.find('#ne-uses').setValue('10')
  await w.find('#ne-cidrs').setValue('10.0.0.0/8, 192.168.1.0/24')
  await w.find('form').trigger('submit')
  await flushPromises()
  const post = calls.find((c) => c.init?.method === 'POST')
  expect(JSON.parse(String(post?.init?.body))).toEqual({ name: 'branch', site: 'hq', expires_in_days: -1, max_uses: 10, allowed_cidrs: ['10.0.0.0/8', '192.168.1.0/24'] })
  expect((w.find('[data-testid="enroll-created"] input').element as HTMLInputElement).value).toBe('ent_secret')
  w.unmount()
})
