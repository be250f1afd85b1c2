import { afterEach, expect, test, vi } from 'vitest'
import { api, ApiError, buildUrl, errorText, parseRetryAfter, setUnauthorizedHandler } from '../src/api/client'

afterEach(() => {
  vi.unstubAllGlobals()
  setUnauthorizedHandler(null)
})

test('buildUrl leaves out empty values', () => {
  expect(buildUrl('/api/x', { a: 1, b: '', c: undefined, d: null, e: 'y z' })).toBe('/api/x?a=1&e=y+z')
  expect(buildUrl('/api/x')).toBe('/api/x')
})

test('Retry-After in seconds or as a date', () => {
  expect(parseRetryAfter('60')).toBe(60)
  expect(parseRetryAfter(null)).toBeNull()
  expect(parseRetryAfter('soon')).toBeNull()
  const now = Date.UTC(2026, 0, 1, 0, 0, 0)
  expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30)
})

test('errors carry the hub message, the status and Retry-After; 401 calls the handler', async () => {
  const seen: string[] = []
  setUnauthorizedHandler((p) => seen.push(p))
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      if (url === '/api/slow') return new Response(JSON.stringify({ error: 'blocked' }), { status: 429, headers: { 'Retry-After': '60' } })
      if (url === '/api/text') return new Response('plain failure', { status: 502 })
      return new Response(JSON.stringify({ error: 'oturum gerekli', auth_required: true }), { status: 401 })
    }),
  )
  const e1 = await api('/api/slow').catch((e) => e)
  expect(e1).toBeInstanceOf(ApiError)
  expect(e1).toMatchObject({ status: 429, retryAfter: 60, message: 'blocked' })
  const e2 = (await api('/api/text').catch((e) => e)) as ApiError
  expect(e2.message).toBe('plain failure')
  await api('/api/v1/users').catch(() => undefined)
  await api('/api/login', { method: 'POST', body: {} }).catch(() => undefined)
  expect(seen).toEqual(['/api/v1/users'])
  expect(errorText(e1)).toBe('blocked')
  expect(errorText(new TypeError('Failed to fetch'))).toBe('the hub did not answer (Failed to fetch)')
})

test('JSON bodies are sent with a content type', async () => {
  const f = vi.fn(async () => new Response('{"ok":true}', { status: 200 }))
  vi.stubGlobal('fetch', f)
  expect(await api('/api/capture/start', { method: 'POST', body: { device: 'lo' } })).toEqual({ ok: true })
  const init = (f.mock.calls[0] as unknown as [string, RequestInit])[1]
  expect(init.body).toBe('{"device":"lo"}')
  expect((init.headers as Record<string, string>)['Content-Type']).toBe('application/json')
})
