// The assistant's pages (issue 32): provider administration (the key is a
// password field that an empty edit keeps, pseudonymisation may be turned
// off only for a local provider, the test result), the conversations
// page with its filters in the URL, and the assistant on the alert,
// incident, agent and device pages.
import { beforeEach, expect, test, vi } from 'vitest'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { createMemoryHistory, createRouter } from 'vue-router'
import AIProvidersView from '../src/views/admin/AIProvidersView.vue'
import AssistantView from '../src/views/AssistantView.vue'
import AlertsView from '../src/views/AlertsView.vue'
import IncidentsView from '../src/views/IncidentsView.vue'
import AgentDetailView from '../src/views/AgentDetailView.vue'
import DeviceDetailView from '../src/views/DeviceDetailView.vue'
import type { Agent, AlertRecord, DeviceItem, Incident } from '../src/api/types'
import { resetAIStatus } from '../src/lib/aiStatus'
import type { AIConversation, AIProvider } from '../src/api/ai'
import { useSession } from '../src/stores/session'

function provider(o: Partial<AIProvider> = {}): AIProvider {
  return {
    id: 1, name: 'ollama-lab', kind: 'local-a', base_url: 'http://10.0.0.5:11434', default_model: 'llama3.1:8b', enabled: true, has_key: false,
    is_local: true, no_think: false, max_tokens: 0, pseudonymise: true, created_ts: 1_764_000_000, updated_ts: 1_764_000_000,
    ...o,
  }
}

function stub(routes: Record<string, (init: RequestInit) => unknown>) {
  const calls: { url: string; method: string; body: unknown }[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit = {}) => {
      const method = init.method ?? 'GET'
      calls.push({ url, method, body: init.body ? JSON.parse(String(init.body)) : undefined })
      const h = routes[`${method} ${url.split('?')[0]}`]
      if (!h) return new Response(JSON.stringify({ error: 'not found' }), { status: 404 })
      return new Response(JSON.stringify(h(init)), { status: 200 })
    }),
  )
  return calls
}

beforeEach(() => {
  setActivePinia(createPinia())
  vi.unstubAllGlobals()
  resetAIStatus()
  useSession().apply({ required: true, authenticated: true, user: { username: 'root', role: 'admin', site: '' }, permissions: ['view', 'analyze', 'admin', 'global-admin'], read_only: false, roles: [] } as never)
})

test('providers: the list, the kind description, and a new provider is always pseudonymised', async () => {
  const calls = stub({
    'GET /api/v1/ai/providers': () => [provider(), provider({ id: 2, name: 'openai', kind: 'cloud-a', base_url: 'https://api.openai.com', has_key: true, is_local: false })],
    'POST /api/v1/ai/providers': () => ({ ok: true }),
    'GET /api/v1/ai/status': () => ({ enabled: true }),
  })
  const w = mount(AIProvidersView)
  await flushPromises()
  const rows = w.findAll('[data-testid="ai-providers-table"] tbody tr').map((r) => r.findAll('td').slice(0, 7).map((c) => c.text()))
  expect(rows).toEqual([
    ['ollama-lab', 'local-a', 'http://10.0.0.5:11434', 'llama3.1:8b', 'yes', 'none', 'local'],
    ['openai', 'cloud-a', 'https://api.openai.com', 'llama3.1:8b', 'yes', 'stored', 'cloud'],
  ])
  expect(w.find('[data-testid="ai-kind-hint"]').text()).toBe('Ollama (POST /api/chat)')
  await w.find('#aip-kind').setValue('cloud-b')
  expect(w.find('[data-testid="ai-kind-hint"]').text()).toBe('Anthropic Messages (POST /v1/messages)')
  expect(w.find('#aip-key').attributes('type')).toBe('password')
  // locality is the hub's finding: a provider not yet saved cannot be unmasked
  expect(w.find('[data-testid="ai-pseudonymise"]').attributes('disabled')).toBeDefined()
  await w.find('#aip-name').setValue('claude')
  await w.find('#aip-url').setValue('https://api.anthropic.com')
  await w.find('#aip-key').setValue('sk-secret')
  await w.find('#aip-model').setValue('claude-sonnet')
  await w.find('[data-testid="ai-provider-form"]').trigger('submit')
  await flushPromises()
  expect(calls.find((c) => c.method === 'POST')?.body).toEqual({
    name: 'claude', kind: 'cloud-b', base_url: 'https://api.anthropic.com', api_key: 'sk-secret', default_model: 'claude-sonnet',
    enabled: true, no_think: false, max_tokens: 0, pseudonymise: true,
  })
})

test('providers: editing keeps the stored key when the field stays empty; a local provider may be unmasked', async () => {
  const calls = stub({
    'GET /api/v1/ai/providers': () => [provider({ has_key: true })],
    'PUT /api/v1/ai/providers/1': () => ({ ok: true }),
    'GET /api/v1/ai/status': () => ({ enabled: true }),
  })
  const w = mount(AIProvidersView)
  await flushPromises()
  await w.find('[aria-label="Edit ollama-lab"]').trigger('click')
  expect(w.find('#aip-key').attributes('placeholder')).toBe('stored: leave empty to keep it')
  const mask = w.find('[data-testid="ai-pseudonymise"]')
  expect(mask.attributes('disabled')).toBeUndefined()
  await mask.setValue(false)
  await w.find('#aip-temp').setValue('0.2')
  await w.find('[data-testid="ai-provider-form"]').trigger('submit')
  await flushPromises()
  const put = calls.find((c) => c.method === 'PUT')
  expect(put?.url).toBe('/api/v1/ai/providers/1')
  expect(put?.body).toEqual({
    name: 'ollama-lab', kind: 'local-a', base_url: 'http://10.0.0.5:11434', api_key: '', default_model: 'llama3.1:8b',
    enabled: true, no_think: false, max_tokens: 0, temperature: 0.2, pseudonymise: false,
  })
})

test('providers: Test shows the latency and models, or the error', async () => {
  stub({
    'GET /api/v1/ai/providers': () => [provider(), provider({ id: 2, name: 'down' })],
    'POST /api/v1/ai/providers/1/test': () => ({ ok: true, latency_ms: 182, models: ['llama3.1:8b', 'qwen2.5:7b'] }),
    'POST /api/v1/ai/providers/2/test': () => ({ ok: false, error: 'connect: connection refused' }),
  })
  const w = mount(AIProvidersView)
  await flushPromises()
  await w.find('[aria-label="Test ollama-lab"]').trigger('click')
  await w.find('[aria-label="Test down"]').trigger('click')
  await flushPromises()
  const cells = w.findAll('[data-testid="ai-provider-test"]').map((c) => c.text())
  expect(cells).toEqual(['ok, 182 ms; models: llama3.1:8b, qwen2.5:7b', 'connect: connection refused'])
})

test('conversations page: filters come from the URL and go to the hub; a conversation opens from the list', async () => {
  const conv: AIConversation = {
    id: 9, scope_kind: 'incident', scope_ref: '42', site: '', source: 'triage', provider_id: 1, model: 'llama3.1:8b', title: '<b>Triage</b> of incident 42',
    created_by: 'triage', created_ts: 1_764_300_000, updated_ts: 1_764_300_000, archived_ts: 0, context_sha256: '', context_bytes: 0, pseudonymised: true,
  }
  const calls = stub({
    'GET /api/v1/ai/status': () => ({ enabled: true, has_ready_provider: true }),
    'GET /api/v1/ai/conversations': () => [conv],
    'GET /api/v1/ai/conversations/9': () => ({ conversation: conv, messages: [], pseudonyms: [] }),
    'GET /api/v1/ai/presets': () => ({ presets: [] }),
  })
  const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/ai', component: AssistantView }, { path: '/:p(.*)*', component: { template: '<div/>' } }] })
  await router.push('/ai?scope=incident&source=triage&archived=1')
  const w = mount(AssistantView, { global: { plugins: [router] } })
  await flushPromises()
  expect(calls.find((c) => c.url.startsWith('/api/v1/ai/conversations'))?.url).toBe('/api/v1/ai/conversations?scope=incident&source=triage&archived=true')
  const row = w.find('[data-conv="9"]')
  expect(row.text()).toContain('<b>Triage</b> of incident 42')
  expect(row.find('b').exists()).toBe(false)
  await row.find('button').trigger('click')
  await flushPromises()
  expect(router.currentRoute.value.query.open).toBe('9')
  expect(w.find('[data-testid="ai-conversation"]').exists()).toBe(true)
})

async function mountAt(path: string, component: object) {
  const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/:p(.*)*', component: { template: '<div/>' } }] })
  await router.push(path)
  const w = mount(component, { global: { plugins: [router] } })
  await flushPromises()
  return w
}

const alertEvent: AlertRecord = {
  id: 77, ts: 1_764_300_000, kind: 'anomaly', key: 'agent:7', message: 'traffic 9x the baseline', severity: 4, state: 'firing', site: '', count: 1,
  group_id: 0, ext_ref: '', agent_id: 7, last_ts: 1_764_300_000, resolved_ts: 0, process: '',
}

test('alerts: "Ask AI" on an event opens the assistant about that event (scope anomaly) when the hub has it on', async () => {
  stub({ 'GET /api/v1/ai/status': () => ({ enabled: true, has_ready_provider: true }), 'GET /api/v1/alerts/events': () => ({ events: [alertEvent] }) })
  const w = await mountAt('/alerts', AlertsView)
  expect(w.find('[data-testid="ai-drawer"]').exists()).toBe(false)
  await w.find('[data-testid="ai-ask-event"]').trigger('click')
  await flushPromises()
  const d = w.find('[data-testid="ai-drawer"]')
  expect(d.attributes('open')).toBeDefined()
  expect(d.find('summary').text()).toBe('Assistant — ask the AI about event 77 (anomaly) (advice only)')
  w.unmount()
})

test('alerts: no "Ask AI" when the assistant is off', async () => {
  stub({ 'GET /api/v1/ai/status': () => ({ enabled: false }), 'GET /api/v1/alerts/events': () => ({ events: [alertEvent] }) })
  const w = await mountAt('/alerts', AlertsView)
  expect(w.find('[data-testid="ai-ask-event"]').exists()).toBe(false)
  w.unmount()
})

test('incidents: the opened incident offers the assistant about it', async () => {
  const inc: Incident = { id: 42, correlation_key: 'agent:7', rule: 5, agent_id: 7, site: '', state: 'open', severity: 4, risk: 80, title: 'Port scan', opened_ts: 1_764_300_000, updated_ts: 1_764_300_000, closed_ts: 0 }
  stub({
    'GET /api/v1/ai/status': () => ({ enabled: true }),
    'GET /api/v1/incidents': () => [inc],
    'GET /api/v1/incidents/42': () => ({ ...inc, events: [] }),
  })
  const w = await mountAt('/incidents', IncidentsView)
  expect(w.find('[data-testid="ai-drawer"]').exists()).toBe(false)
  await w.find('[data-testid="incidents-table"] tbody button').trigger('click')
  await flushPromises()
  expect(w.find('[data-testid="ai-drawer"] summary').text()).toBe('Assistant — ask the AI about incident 42 (advice only)')
  w.unmount()
})

test('agent and device pages: the assistant about that object, collapsed', async () => {
  const agent: Agent = {
    id: 7, name: 'web-01', site: 'hq', online: true, last_seen: 1_764_300_000, version: '1.4.2', remote_ip: '10.0.0.7', os: 'linux', arch: 'amd64',
    protocol_version: 1, enrolled_at: 1_764_200_000, attr_method: 'pcap', attr_iface: 'eth0', attr_note: '', rates: [], conns: 0, dropped: 0, cert_not_after: 0,
  }
  const device: DeviceItem = {
    id: 3, name: 'core-sw', host: '10.0.0.2', kind: 'switch', site: 'hq', snmp_version: '2c', poll_seconds: 60, enabled: true, sys_name: 'core-sw', sys_descr: '',
    last_poll: 0, last_error: '', vendor: '', api_profile: '', api_version: '', api_caps: '',
  }
  stub({
    'GET /api/v1/ai/status': () => ({ enabled: true }),
    'GET /api/v1/agents/7': () => ({ agent, connections: [] }),
    'GET /api/v1/agents/7/history': () => [],
    'GET /api/v1/processes': () => [],
    'GET /api/v1/devices': () => [device],
  })
  for (const [path, view, label] of [
    ['/agents/7', AgentDetailView, 'this agent'],
    ['/devices/3', DeviceDetailView, 'this device'],
  ] as const) {
    const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/agents/:id', component: AgentDetailView }, { path: '/devices/:id', component: DeviceDetailView }, { path: '/hosts/:ip', name: 'host', component: { template: '<div/>' } }, { path: '/:p(.*)*', component: { template: '<div/>' } }] })
    await router.push(path)
    const w = mount({ template: '<RouterView />' }, { global: { plugins: [router], stubs: { TimeChart: true, AnomalyBand: true } } })
    await flushPromises()
    const d = w.findComponent(view).find('[data-testid="ai-drawer"]')
    expect(d.attributes('open')).toBeUndefined()
    expect(d.find('summary').text()).toBe(`Assistant — ask the AI about ${label} (advice only)`)
    w.unmount()
  }
})
