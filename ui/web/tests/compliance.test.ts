// The Compliance page against the hub's compliance and ISMS API shapes
// (typed with src/api/types, so a renamed field fails the typecheck).
import { beforeEach, expect, test, vi } from 'vitest'
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import ComplianceView from '../src/views/ComplianceView.vue'
import { useSession } from '../src/stores/session'
import type { ComplianceReview, ComplianceStatus, ISMSEntry } from '../src/api/types'

const status: ComplianceStatus = {
  config: { enabled: true, tsa_url: 'http://tsa.example/', worm_dir: '/var/lib/netmon/worm', mask_pii: true, retention_days: 730, key_id: 'ab12', public_key: 'PEM' },
  records: 1234567,
  last_record_ts: 1764079200,
  last_hourly: { hour: '2026-11-25T13:00:00Z', size: 4000, last_seq: 1234567, root: 'aa', signed_at: 1764079200, key_id: 'ab12' },
  last_daily: { day: '2026-11-24', size: 90000, root: 'bb', signed_at: 1764028800, tsa_status: 'error:stamp reply: HTTP 503', worm: 'ok' },
  worm_errors: 0,
  worm_error: '',
  time_drift: false,
}
const risk: ISMSEntry = {
  id: 1, kind: 'risks', ref: 'R-1', updated_at: 1, updated_by: 'admin',
  risk: { title: 'firewall misconfiguration', assets: ['AS-1'], likelihood: 3, impact: 4, score: 12, treatment: 'mitigate', controls: ['A.8.9', 'A.8.20'], owner: 'netops', status: 'open', due: '' },
}

beforeEach(() => {
  setActivePinia(createPinia())
  useSession().apply({ required: true, authenticated: true, sso: false, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: ['view', 'operate', 'analyze', 'devices', 'agents', 'admin', 'audit', 'global-admin'], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'], user: { username: 'a', role: 'admin', site: '', actor_type: 'user' } })
})

test('compliance page: seal state, evidence link, reviews, ISMS registers', async () => {
  const posted: unknown[] = []
  const reviews: ComplianceReview[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const path = url.split('?')[0]
      const body = (v: unknown) => new Response(JSON.stringify(v), { status: 200 })
      if (path === '/api/v1/compliance/status') return body(status)
      if (path === '/api/v1/isms/risks') return body([risk])
      if (path.startsWith('/api/v1/isms/')) return body([])
      if (path === '/api/v1/compliance/reviews' && init?.method === 'POST') {
        posted.push(JSON.parse(String(init.body)))
        reviews.push({ id: 1, ts: 1764079200, author: 'a', kind: 'access', period: '2026-10', notes: 'q3', finding: 'none' })
        return body(reviews[0])
      }
      if (path === '/api/v1/compliance/reviews') return body(reviews)
      return new Response('{}', { status: 404 })
    }),
  )
  const w = mount(ComplianceView)
  await flushPromises()
  const st = w.find('[data-testid="compliance-status"]').text()
  expect(st).toContain('1,234,567')
  expect(st).toContain('error:stamp reply: HTTP 503')
  expect(st).toContain('2026-11-25T13:00:00Z')
  expect(w.find('[data-testid="evidence-download"]').attributes('href')).toMatch(/^\/api\/v1\/compliance\/evidence\?from=\d{4}-\d{2}-\d{2}&to=\d{4}-\d{2}-\d{2}&format=zip$/)
  await w.find('#ev-mask').setValue('false')
  expect(w.find('[data-testid="evidence-download"]').attributes('href')).toContain('mask=false')
  expect(w.text()).toContain('A.8.9, A.8.20')
  await w.find('#rv-kind').setValue('access')
  await w.find('#rv-period').setValue('2026-10')
  await w.find('#rv-notes').setValue('q3')
  await w.find('#rv-finding').setValue('none')
  await w.find('[data-testid="review-form"]').trigger('submit')
  await flushPromises()
  expect(posted).toEqual([{ kind: 'access', period: '2026-10', notes: 'q3', finding: 'none' }])
  expect(w.find('[data-testid="review-table"]').text()).toContain('2026-10')
})

test('an auditor reads evidence and reviews but records nothing', async () => {
  useSession().apply({ required: true, authenticated: true, sso: false, multi_site: false, exposed: false, rbac_users: true, bootstrap_password: false, permissions: ['view', 'audit'], read_only: true, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'], user: { username: 'aud', role: 'auditor', site: '', actor_type: 'user' } })
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      const path = url.split('?')[0]
      if (path === '/api/v1/compliance/status') return new Response(JSON.stringify(status), { status: 200 })
      return new Response('[]', { status: 200 })
    }),
  )
  const w = mount(ComplianceView)
  await flushPromises()
  expect(w.find('[data-testid="evidence-download"]').exists()).toBe(true)
  expect(w.find('[data-testid="review-table"]').exists()).toBe(true)
  expect(w.find('[data-testid="review-form"]').exists()).toBe(false)
})
