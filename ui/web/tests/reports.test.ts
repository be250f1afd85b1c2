// The Reports page (issue 31) against the hub's report API as the OpenAPI
// document types it (src/api/types): fixtures are typed, so a field the
// hub renames fails vue-tsc here. What the role may do decides what is
// shown; a 400 naming a field is shown next to that field.
import { beforeEach, expect, test, vi } from 'vitest'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { createMemoryHistory, createRouter } from 'vue-router'
import ReportsView from '../src/views/ReportsView.vue'
import { useSession } from '../src/stores/session'
import { dispositionFilename, errorField, knownSites, parseRecipients, reportQuery, reportTypes, shortSha, slaGoal, slaScope, slaState } from '../src/lib/reports'
import type { Agent, DeviceItem, ReportArchiveEntry, ReportSchedule, SLATarget, SLATargetStatus } from '../src/api/types'

const SHA = '3f2a9c1b0d4e5f60718293a4b5c6d7e8f9012345678901234567890abcdef0123'

test('errorField: the field a hub 400 names, only among the form fields', () => {
  const fields = ['name', 'spec', 'recipients', 'days', 'timezone']
  const cases: [string, string | null][] = [
    ['spec: "every:day" does not parse: want daily:HH:MM, weekly:<mon..sun>:HH:MM or monthly:<1-28>:HH:MM', 'spec'],
    ['recipients: "bob" is not an e-mail address', 'recipients'],
    ['query parameter "days": want 1-90', 'days'],
    ['timezone: "Mars/Base" is not an IANA time zone', 'timezone'],
    ['site: must be a site name of at most 64 bytes', null], // not a field of this form
    ['permission denied: the identity lacks analyze', null],
    ['request failed with HTTP 503', null],
  ]
  for (const [msg, want] of cases) expect(errorField(msg, fields), msg).toBe(want)
})

test('reportTypes: analyze gets all three, view alone only compliance', () => {
  expect(reportTypes(true)).toEqual(['traffic', 'enterprise', 'compliance'])
  expect(reportTypes(false)).toEqual(['compliance'])
})

test('reportQuery leaves out an empty site; dispositionFilename reads both header forms', () => {
  expect(reportQuery({ type: 'enterprise', days: 30, format: 'pdf', site: '' })).toEqual({ type: 'enterprise', days: 30, format: 'pdf' })
  expect(reportQuery({ type: 'traffic', days: 7, format: 'html', site: 'İstanbul' })).toEqual({ type: 'traffic', days: 7, format: 'html', site: 'İstanbul' })
  expect(dispositionFilename('attachment; filename=netmon-traffic-all-20261121-20261128.pdf', 'x')).toBe('netmon-traffic-all-20261121-20261128.pdf')
  expect(dispositionFilename('attachment; filename="a b.pdf"', 'x')).toBe('a b.pdf')
  // mime.FormatMediaType writes non-ASCII names as filename*=utf-8''…
  expect(dispositionFilename("attachment; filename*=utf-8''netmon-traffic-%C4%B0stanbul.pdf", 'x')).toBe('netmon-traffic-İstanbul.pdf')
  expect(dispositionFilename(null, 'fallback.pdf')).toBe('fallback.pdf')
})

test('SLA: state, goal and scope as the table shows them', () => {
  const t: SLATarget = { id: 1, name: 'uptime', metric: 'agent_uptime', scope: 'agent', site: '', agent_id: 3, threshold: 99.5, window_hours: 24, created_at: 1, created_by: 'admin' }
  const st = (o: Partial<SLATargetStatus>): SLATargetStatus => ({ target: t, measured: 0, met: true, no_data: false, evaluated_at: 1, ...o })
  expect(slaState(st({ measured: 99.9, met: true }))).toBe('met')
  expect(slaState(st({ measured: 97.1, met: false }))).toBe('breached')
  // no data is never a breach, even when met is false
  expect(slaState(st({ no_data: true, met: false }))).toBe('no data')
  expect(slaGoal(t)).toBe('Agent uptime ≥ 99.5%')
  expect(slaGoal({ metric: 'packet_drop', threshold: 1 })).toBe('Packet drop rate ≤ 1%')
  expect(slaScope(t, (id) => (id === 3 ? 'web-01' : ''))).toBe('agent 3 (web-01)')
  expect(slaScope({ ...t, scope: 'site', site: '' })).toBe('every site')
  expect(slaScope({ ...t, scope: 'device', device_id: 2 })).toBe('device 2')
})

test('knownSites, parseRecipients, shortSha', () => {
  expect(knownSites([{ site: 'hq' }, { site: '' }, { site: 'branch' }], [{ site: 'hq' }, { site: 'dc' }])).toEqual(['branch', 'dc', 'hq'])
  expect(parseRecipients(' a@example.com, b@example.com;c@example.com\n')).toEqual(['a@example.com', 'b@example.com', 'c@example.com'])
  expect(shortSha(SHA)).toBe('3f2a9c1b0d4e…')
})

// ---- the page, mounted against a stubbed fetch

const now = () => Math.floor(Date.now() / 1000)

function agent(o: Partial<Agent> = {}): Agent {
  return {
    id: 7, name: 'web-01', site: 'hq', online: true, last_seen: now(), version: '1', remote_ip: '10.0.0.7', os: 'linux', arch: 'amd64',
    protocol_version: 1, enrolled_at: now(), attr_method: 'pcap', attr_iface: 'eth0', attr_note: '', rates: [], conns: 0, dropped: 0, cert_not_after: 0, ...o,
  }
}

function device(o: Partial<DeviceItem> = {}): DeviceItem {
  return {
    id: 2, name: 'core-sw', host: '10.0.0.1', kind: 'switch', site: 'branch', snmp_version: '2c', poll_seconds: 60, enabled: true, sys_name: '', sys_descr: '',
    last_poll: 0, last_error: '', vendor: '', api_profile: '', api_version: '', api_caps: [], ...o,
  } as DeviceItem
}

const schedule: ReportSchedule = {
  id: 4, name: 'Weekly <b>traffic</b>', type: 'traffic', days: 7, format: 'pdf', site: '', recipients: ['noc@example.com'], spec: 'weekly:mon:08:00',
  timezone: 'Europe/Istanbul', enabled: true, last_slot: 0, last_status: '', next_run: now() + 3600, created_at: now(), created_by: 'admin',
}
const archived: ReportArchiveEntry = {
  id: 9, schedule_id: 4, type: 'traffic', format: 'pdf', site: '', days: 7, from: now() - 7 * 86400, to: now(), filename: 'netmon-traffic-all.pdf',
  size: 20480, sha256: SHA, data_sha256: SHA, delivery: 'sent to 1', generated_at: now(), generated_by: 'admin',
}
const sla: SLATargetStatus = {
  target: { id: 1, name: 'HQ uptime', metric: 'agent_uptime', scope: 'site', site: 'hq', threshold: 99, window_hours: 24, created_at: 1, created_by: 'admin' },
  measured: 97.25, met: false, no_data: false, evaluated_at: now(),
}

type Handler = (init?: RequestInit) => Response | unknown

function respond(routes: Record<string, Handler>) {
  const calls: { url: string; init?: RequestInit }[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      calls.push({ url, init })
      const h = routes[`${init?.method ?? 'GET'} ${url.split('?')[0]}`]
      if (!h) return new Response(JSON.stringify({ error: 'not found' }), { status: 404 })
      const out = h(init)
      return out instanceof Response ? out : new Response(JSON.stringify(out), { status: 200 })
    }),
  )
  return calls
}

const base = () => ({
  'GET /api/v1/agents': () => [agent(), agent({ id: 8, name: 'db', site: '' })],
  'GET /api/v1/devices': () => [device()],
  'GET /api/v1/reports/schedules': () => [schedule],
  'GET /api/v1/reports/archive': () => [archived],
  'GET /api/v1/sla/targets': () => [sla],
})

function signIn(role: string, permissions: string[], site = ''): void {
  useSession().apply({
    required: true, authenticated: true, sso: false, multi_site: false, exposed: false, rbac_users: true, bootstrap_password: false,
    permissions: permissions as never, read_only: false, roles: [], user: { username: 'u', role: role as never, site, actor_type: 'user' },
  })
}

async function mountAt(path: string) {
  const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/reports', name: 'reports', component: ReportsView }] })
  await router.push(path)
  const w = mount(ReportsView, { global: { plugins: [router] } })
  await flushPromises()
  return w
}

beforeEach(() => {
  setActivePinia(createPinia())
  vi.unstubAllGlobals()
})

test('analyst: all types, sites from agents and devices, schedules, archive, SLA with its status', async () => {
  signIn('analyst', ['view', 'analyze'])
  respond(base())
  const w = await mountAt('/reports?site=hq')
  expect(w.findAll('#rep-type option').map((o) => o.text())).toEqual(['traffic', 'enterprise', 'compliance'])
  expect(w.findAll('#rep-site option').map((o) => o.text())).toEqual(['all sites', 'branch', 'hq'])
  expect((w.find('#rep-site').element as HTMLSelectElement).value).toBe('hq')
  const sched = w.find('[data-testid="schedules-table"]').text()
  expect(sched).toContain('Weekly <b>traffic</b>') // people's text, never markup
  expect(sched).toContain('weekly:mon:08:00 Europe/Istanbul')
  expect(sched).toContain('noc@example.com')
  expect(sched).toContain('never')
  expect(w.find('[data-testid="schedule-form"]').exists()).toBe(true)
  const arch = w.find('[data-archive="9"]')
  expect(arch.find('[data-testid="archive-sha"]').text()).toBe('3f2a9c1b0d4e…')
  expect(arch.find('[data-testid="archive-sha"]').attributes('title')).toBe(SHA)
  expect(arch.text()).toContain('20.0 KiB')
  expect(arch.text()).toContain('sent to 1')
  expect(arch.find('a').attributes('href')).toBe('/api/v1/reports/archive/9')
  const row = w.find('[data-sla="1"]')
  expect(row.find('[data-testid="sla-measured"]').text()).toBe('97.25%')
  expect(row.find('[data-testid="sla-state"]').text()).toBe('breached')
  expect(row.find('[data-testid="sla-state"]').classes()).toContain('pill-bad')
  expect(row.text()).toContain('Agent uptime ≥ 99%')
  expect(w.find('[data-testid="sla-form"]').exists()).toBe(true)
  w.unmount()
})

test('viewer: only the compliance report and the SLA list; no schedules, archive or forms', async () => {
  signIn('viewer', ['view'])
  const calls = respond(base())
  const w = await mountAt('/reports')
  expect(w.findAll('#rep-type option').map((o) => o.text())).toEqual(['compliance'])
  expect(w.find('[data-testid="schedules-table"]').exists()).toBe(false)
  expect(w.find('[data-testid="schedule-form"]').exists()).toBe(false)
  expect(w.find('[data-testid="archive-table"]').exists()).toBe(false)
  expect(w.find('[data-testid="sla-table"]').exists()).toBe(true)
  expect(w.find('[data-testid="sla-form"]').exists()).toBe(false)
  expect(w.find('[data-sla="1"]').text()).not.toContain('Delete')
  // and it never asks for what it would be refused
  expect(calls.some((c) => c.url.startsWith('/api/v1/reports/'))).toBe(false)
  w.unmount()
})

test('site-bound caller: no site field (the hub pins its site)', async () => {
  signIn('analyst', ['view', 'analyze'], 'hq')
  respond(base())
  const w = await mountAt('/reports')
  expect(w.find('#rep-site').exists()).toBe(false)
  expect(w.find('#sc-site').exists()).toBe(false)
  w.unmount()
})

test('a schedule the hub refuses shows its message next to the field it names; nothing listed', async () => {
  signIn('analyst', ['view', 'analyze'])
  const calls = respond({
    ...base(),
    'POST /api/v1/reports/schedules': () => new Response(JSON.stringify({ error: 'spec: "every:day" does not parse' }), { status: 400 }),
  })
  const w = await mountAt('/reports')
  await w.find('#sc-name').setValue('nightly')
  await w.find('#sc-spec').setValue('every:day')
  await w.find('#sc-rcpt').setValue('a@example.com, b@example.com')
  await w.find('[data-testid="schedule-form"]').trigger('submit')
  await flushPromises()
  expect(w.find('[data-testid="sc-spec-err"]').text()).toBe('spec: "every:day" does not parse')
  expect(w.find('#sc-spec').attributes('aria-invalid')).toBe('true')
  expect(w.find('#sc-name').attributes('aria-invalid')).toBe('false')
  expect(w.findAll('[data-testid="schedules-table"] tbody tr[data-schedule]')).toHaveLength(1)
  expect(w.find('#sc-name').element).toHaveProperty('value', 'nightly') // the form keeps what was typed
  const post = calls.find((c) => c.init?.method === 'POST')!
  expect(JSON.parse(String(post.init!.body))).toMatchObject({ name: 'nightly', spec: 'every:day', recipients: ['a@example.com', 'b@example.com'], type: 'traffic', days: 7, format: 'pdf' })
  w.unmount()
})

test('preview: the archived HTML in a sandboxed frame, the SHA-256 from the answer shown', async () => {
  signIn('analyst', ['view', 'analyze'])
  const calls = respond({
    ...base(),
    'GET /api/report': () =>
      new Response('<!doctype html><title>Traffic report</title><h1>Traffic report</h1>', {
        status: 200,
        headers: { 'Content-Type': 'text/html; charset=utf-8', 'Content-Disposition': 'inline; filename=netmon-traffic-all.html', 'X-Netmon-Report-Sha256': SHA, 'X-Netmon-Report-Archive-Id': '42' },
      }),
  })
  URL.createObjectURL = vi.fn(() => 'blob:x')
  URL.revokeObjectURL = vi.fn()
  const w = await mountAt('/reports?type=traffic')
  await w.find('#rep-days').setValue(14)
  await w.find('[data-testid="report-form"]').trigger('submit')
  await flushPromises()
  const frame = w.find('[data-testid="report-preview"]')
  expect(frame.attributes('sandbox')).toBe('')
  // the frame loads the archived copy, served with the report's own CSP
  expect(frame.attributes('src')).toBe('/api/v1/reports/archive/42?inline=true')
  expect(w.find('[data-testid="report-sha"]').text()).toBe(SHA)
  expect(calls.find((c) => c.url.startsWith('/api/report'))!.url).toBe('/api/report?type=traffic&days=14&format=html')
  // days out of range: said next to the field, nothing asked
  const before = calls.length
  await w.find('#rep-days').setValue(91)
  await w.find('[data-testid="report-form"]').trigger('submit')
  await flushPromises()
  expect(w.find('[data-testid="rep-days-err"]').text()).toBe('days: whole days, 1 to 90')
  expect(calls.length).toBe(before)
  w.unmount()
})
