// The fleet pages (agents, agent detail, enroll tokens) against the hub's
// real agent API (app/api/routes.go, testdata/openapi/openapi.json): the
// fixtures are typed with src/api/types, so a field the hub renames fails
// the typecheck here as well.
import { beforeEach, expect, test, vi } from 'vitest'
import { defineComponent } from 'vue'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { createMemoryHistory, createRouter } from 'vue-router'
import AgentsView from '../src/views/AgentsView.vue'
import AgentDetailView from '../src/views/AgentDetailView.vue'
import EnrollTokensView from '../src/views/admin/EnrollTokensView.vue'
import ConfirmDialog from '../src/components/ConfirmDialog.vue'
import { useSession } from '../src/stores/session'
import { isLoopback } from '../src/lib/agents'
import type { Agent, AgentDetail, AgentHistoryItem, EnrollToken, EnrollTokenCreated, OKResult } from '../src/api/types'

const now = () => Math.floor(Date.now() / 1000)

// uPlot needs a canvas happy-dom does not have: the stub keeps the data and series
const ChartStub = defineComponent({
  name: 'TimeChart',
  props: { data: { type: Array, required: true }, series: { type: Array, required: true }, label: { type: String, default: '' } },
  template: '<div data-testid="agent-chart" />',
})

function router() {
  return createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/hosts/:ip', name: 'host', component: { template: '<div/>' } },
      { path: '/:p(.*)*', component: { template: '<div/>' } },
    ],
  })
}

async function detailRouter(id: number) {
  const r = createRouter({
    history: createMemoryHistory(),
    routes: [
      { path: '/agents/:id(\\d+)', component: AgentDetailView },
      { path: '/agents', component: { template: '<div>list</div>' } },
      { path: '/hosts/:ip', name: 'host', component: { template: '<div>host</div>' } },
    ],
  })
  await r.push(`/agents/${id}`)
  return r
}

type Handler = (init?: RequestInit, url?: string) => unknown

function respond(routes: Record<string, Handler>) {
  const calls: { url: string; init?: RequestInit }[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      calls.push({ url, init })
      const h = routes[`${init?.method ?? 'GET'} ${url.split('?')[0]}`]
      if (!h) return new Response(JSON.stringify({ error: 'not found' }), { status: 404 })
      return new Response(JSON.stringify(h(init, url)), { status: 200 })
    }),
  )
  return calls
}

function agentItem(o: Partial<Agent> = {}): Agent {
  return {
    id: 7, name: 'web-01', site: 'hq', online: true, last_seen: now() - 20, version: '1.4.2', remote_ip: '10.0.0.7',
    os: 'linux', arch: 'amd64', protocol_version: 1, enrolled_at: now() - 3600,
    attr_method: 'pcap', attr_iface: 'eth0', attr_note: '', rates: [], conns: 0, dropped: 0, cert_not_after: 0,
    ...o,
  }
}

function enrollItem(o: Partial<EnrollToken> = {}): EnrollToken {
  return {
    id: 2, name: 'lab', site: 'hq', created_at: now() - 60, created_by: 'admin', expires_at: now() + 86400, last_used: 0,
    revoked: false, revoked_at: 0, max_uses: 1, uses: 0, allowed_cidrs: [], state: 'active',
    ...o,
  }
}

beforeEach(() => {
  setActivePinia(createPinia())
  useSession().apply({ required: true, authenticated: true, sso: false, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: ['view', 'operate', 'analyze', 'devices', 'agents', 'admin', 'audit', 'global-admin'], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'], user: { username: 'a', role: 'admin', site: '', actor_type: 'user' } })
  vi.unstubAllGlobals()
})

test('agents: the list shows state, summed rates (bits/s), connections and the attribution method', async () => {
  respond({
    'GET /api/v1/agents': (): Agent[] => [
      agentItem({
        conns: 42,
        rates: [
          { name: 'eth0', rx_bps: 1_500_000, tx_bps: 250_000, pps: 10, rx_bytes: 1, tx_bytes: 1, rx_packets: 1, tx_packets: 1, speed_mbps: 0 },
          { name: 'eth1', rx_bps: 500_000, tx_bps: 0, pps: 1, rx_bytes: 1, tx_bytes: 1, rx_packets: 1, tx_packets: 1, speed_mbps: 0 },
          // loopback is the host talking to itself: not in the fleet's receive and send
          { name: 'lo', rx_bps: 9_000_000, tx_bps: 9_000_000, pps: 1, rx_bytes: 1, tx_bytes: 1, rx_packets: 1, tx_packets: 1, speed_mbps: 0 },
        ],
      }),
      agentItem({ id: 8, name: '<b>db</b>', site: '', online: false, last_seen: 0, version: '1.4.0', remote_ip: '10.0.0.8', attr_method: 'off', attr_iface: '', attr_note: 'no BTF' }),
    ],
  })
  const w = mount(AgentsView, { global: { plugins: [router()] } })
  await flushPromises()
  const text = w.find('[data-testid="agents-table"]').text()
  expect(text).toContain('web-01')
  expect(text).toContain('online')
  expect(text).toContain('offline')
  expect(text).toContain('2.00 Mbit/s') // 1.5 + 0.5 Mbit/s received: rx_bps is already bits/s
  expect(text).toContain('250 kbit/s')
  expect(text).toContain('pcap on eth0')
  expect(w.find('[data-testid="agent-row-7"]').text()).toContain('42')
  expect(text).toContain('<b>db</b>')
  expect(w.find('b').exists()).toBe(false)
  expect(w.find('a[href="/agents/7"]').exists()).toBe(true)
  // online first, then by name
  expect(w.findAll('tbody tr').map((r) => r.attributes('data-testid'))).toEqual(['agent-row-7', 'agent-row-8'])
  expect(w.find('[data-testid="agent-row-8"] td[title="no BTF"]').exists()).toBe(true)
  w.unmount()
})

test('agents: loopback interfaces as the hub names them', () => {
  for (const n of ['lo', 'lo0', 'Loopback Pseudo-Interface 1']) expect(isLoopback(n), n).toBe(true)
  for (const n of ['eth0', 'local0', 'lo-backup', 'wlan0']) expect(isLoopback(n), n).toBe(false)
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

test('agent detail: details, interface rates, history in bytes/s charted as bits/s, connections shown literally', async () => {
  const history: AgentHistoryItem[] = [
    { ts: now() - 20, in: 125_000, out: 12_500, local: 1_000, pps: 50 },
    { ts: now() - 10, in: 250_000, out: 25_000, local: 2_000, pps: 60 },
  ]
  const detail: AgentDetail = {
    agent: agentItem({
      conns: 2, dropped: 3, cert_not_after: now() + 90 * 86400,
      rates: [{ name: 'eth0', rx_bps: 8_000_000, tx_bps: 800_000, pps: 120, rx_bytes: 5_000_000, tx_bytes: 600_000, rx_packets: 9, tx_packets: 9, speed_mbps: 1000 }],
    }),
    connections: [
      { proto: 'tcp', local_addr: '10.0.0.7:443', remote_addr: '198.51.100.4:51000', status: 'ESTABLISHED', pid: 4242, process: '<img src=x onerror=window.__xss=1>' },
      { proto: 'udp', local_addr: '0.0.0.0:53', remote_addr: '', status: 'NONE', pid: 0, process: '\u202Egnp.exe' },
    ],
  }
  const calls = respond({
    'GET /api/v1/agents/7': () => detail,
    'GET /api/v1/agents/7/history': () => history,
  })
  const r = await detailRouter(7)
  const w = mount({ template: '<RouterView />' }, { global: { plugins: [r], stubs: { TimeChart: ChartStub } } })
  await flushPromises()
  expect(calls.some((c) => c.url === '/api/v1/agents/7/history?minutes=60')).toBe(true)
  // the Report button opens the Reports page with the agent's site picked
  expect(w.find('[data-testid="agent-report-link"]').attributes('href')).toBe('/reports?site=hq')
  const info = w.find('[data-testid="agent-details"]').text()
  expect(info).toContain('linux/amd64')
  expect(info).toContain('pcap on eth0')
  expect(info).toContain('Lost batches3')
  expect(info).toContain('Client certificate')
  const ifaces = w.find('[data-testid="agent-ifaces-table"]').text()
  expect(ifaces).toContain('8.00 Mbit/s')
  expect(ifaces).toContain('800 kbit/s')
  // the chart gets bits/s: 125 000 bytes/s is 1 Mbit/s
  const chart = w.findComponent(ChartStub)
  expect(chart.exists()).toBe(true)
  const series = chart.props('series') as { label: string; mirror?: boolean }[]
  const data = chart.props('data') as number[][]
  const inSeries = data[1 + series.findIndex((s) => s.label === 'In')]
  expect(inSeries).toContain(1000000)
  expect(inSeries).toContain(2000000)
  // Out is drawn below the axis
  expect(series.find((s) => s.label === 'Out')?.mirror).toBe(true)
  // the remote address links to its host page
  expect(w.find('[data-testid="agent-conns-table"] a[href="/hosts/198.51.100.4"]').exists()).toBe(true)
  const conns = w.find('[data-testid="agent-conns-table"]')
  expect(conns.text()).toContain('<img src=x onerror=window.__xss=1>')
  expect(conns.text()).toContain('U+202Egnp.exe')
  expect(conns.find('img').exists()).toBe(false)
  w.unmount()
})

test('agent detail: rename sends PATCH {name} and shows the returned item; delete sends DELETE and returns to the list', async () => {
  let renamedTo = ''
  const calls = respond({
    'GET /api/v1/agents/7': (): AgentDetail => ({ agent: agentItem(), connections: [] }),
    'GET /api/v1/agents/7/history': () => [],
    'PATCH /api/v1/agents/7': (init): Agent => {
      renamedTo = (JSON.parse(String(init?.body)) as { name: string }).name
      return agentItem({ name: renamedTo })
    },
    'DELETE /api/v1/agents/7': (): OKResult => ({ ok: true }),
  })
  const r = await detailRouter(7)
  const w = mount({ template: '<RouterView />' }, { global: { plugins: [r], stubs: { TimeChart: true } } })
  await flushPromises()
  expect(w.find('h1').text()).toContain('web-01')
  expect(w.find('[data-testid="agent-chart-empty"]').exists()).toBe(true)
  await w.find('#agent-name').setValue('  front-door  ')
  await w.find('form').trigger('submit')
  await flushPromises()
  expect(renamedTo).toBe('front-door')
  expect(w.find('h1').text()).toContain('front-door')
  expect(w.find('[data-testid="agent-rename-msg"]').text()).toBe('Renamed.')
  // the answer is used: no reload of the detail was needed
  expect(calls.filter((c) => c.url === '/api/v1/agents/7' && (c.init?.method ?? 'GET') === 'GET')).toHaveLength(1)

  w.findComponent(ConfirmDialog).vm.$emit('confirm')
  await flushPromises()
  expect(calls.some((c) => c.url === '/api/v1/agents/7' && c.init?.method === 'DELETE')).toBe(true)
  expect(r.currentRoute.value.path).toBe('/agents')
  w.unmount()
})

test('agent detail: an unknown agent says so', async () => {
  respond({})
  const r = await detailRouter(99)
  const w = mount({ template: '<RouterView />' }, { global: { plugins: [r], stubs: { TimeChart: true } } })
  await flushPromises()
  expect(w.text()).toContain('This agent does not exist')
  w.unmount()
})

test('enroll tokens: the list shows the hub state; create sends the body and shows the secret once from {ok,id,token,item}', async () => {
  const calls = respond({
    'GET /api/v1/enroll-tokens': (): EnrollToken[] => [
      enrollItem({ id: 1, name: 'old', site: '', expires_at: 0, revoked: true, revoked_at: now() - 30, state: 'revoked' }),
      enrollItem({ id: 2, allowed_cidrs: ['10.0.0.0/8'] }),
      enrollItem({ id: 4, name: 'used', uses: 1, state: 'exhausted' }),
      enrollItem({ id: 5, name: 'stale', expires_at: now() - 10, state: 'expired' }),
    ],
    'POST /api/v1/enroll-tokens': (): EnrollTokenCreated => ({
      ok: true, id: 3, token: 'ent_secret',
      item: enrollItem({ id: 3, name: 'branch', expires_at: 0, max_uses: 10, allowed_cidrs: ['10.0.0.0/8', '192.168.1.0/24'] }),
    }),
  })
  const w = mount(EnrollTokensView, { global: { plugins: [router()] } })
  await flushPromises()
  const state = (id: number) => w.find(`[data-testid="enroll-row-${id}"] [data-testid="enroll-state"]`).text()
  expect(state(1)).toBe('revoked')
  expect(state(2)).toBe('active')
  expect(state(4)).toBe('exhausted')
  expect(state(5)).toBe('expired')
  expect(w.find('[data-testid="enroll-row-1"] button').exists()).toBe(false) // nothing to revoke
  expect(w.find('[data-testid="enroll-row-2"]').text()).toContain('10.0.0.0/8')
  expect(w.find('[data-testid="enroll-row-2"]').text()).toContain('by admin')
  expect(w.find('[data-testid="enroll-row-4"]').text()).toContain('1 / 1')
  await w.find('#ne-name').setValue('branch')
  await w.find('#ne-site').setValue('hq')
  await w.find('#ne-exp').setValue('-1')
  await w.find('#ne-uses').setValue('10')
  await w.find('#ne-cidrs').setValue('10.0.0.0/8, 192.168.1.0/24')
  await w.find('form').trigger('submit')
  await flushPromises()
  const post = calls.find((c) => c.init?.method === 'POST')
  expect(JSON.parse(String(post?.init?.body))).toEqual({ name: 'branch', site: 'hq', expires_in_days: -1, max_uses: 10, allowed_cidrs: ['10.0.0.0/8', '192.168.1.0/24'] })
  const box = w.find('[data-testid="enroll-created"]')
  expect((box.find('[data-testid="enroll-secret"]').element as HTMLInputElement).value).toBe('ent_secret')
  expect(box.text()).toContain('“branch” created')
  expect(box.find('button[aria-label="Copy the enroll token"]').exists()).toBe(true)
  // the list never carries the secret
  expect(w.find('[data-testid="enroll-table"]').text()).not.toContain('ent_secret')
  w.unmount()
})

test('enroll tokens: revoke sends DELETE and shows the returned item as revoked', async () => {
  let revoked = false
  const calls = respond({
    'GET /api/v1/enroll-tokens': (): EnrollToken[] => [revoked ? enrollItem({ revoked: true, revoked_at: now(), state: 'revoked' }) : enrollItem()],
    'DELETE /api/v1/enroll-tokens/2': (): EnrollToken => {
      revoked = true
      return enrollItem({ revoked: true, revoked_at: now(), state: 'revoked' })
    },
  })
  const w = mount(EnrollTokensView, { global: { plugins: [router()] } })
  await flushPromises()
  expect(w.find('[data-testid="enroll-row-2"] [data-testid="enroll-state"]').text()).toBe('active')
  await w.find('[data-testid="enroll-row-2"] button[aria-label="Revoke lab"]').trigger('click')
  w.findComponent(ConfirmDialog).vm.$emit('confirm')
  await flushPromises()
  expect(calls.some((c) => c.url === '/api/v1/enroll-tokens/2' && c.init?.method === 'DELETE')).toBe(true)
  expect(w.find('[data-testid="enroll-row-2"] [data-testid="enroll-state"]').text()).toBe('revoked')
  expect(w.find('[data-testid="enroll-row-2"] button').exists()).toBe(false)
  w.unmount()
})
