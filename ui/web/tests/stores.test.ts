import { beforeEach, describe, expect, test, vi } from 'vitest'
import { createPinia, setActivePinia } from 'pinia'
import { RBAC_KEY, useSession } from '../src/stores/session'
import { CLOSE_SESSION_ENDED, setSocketFactory, useLive } from '../src/stores/live'
import { setUnauthorizedHandler } from '../src/api/client'
import { useTheme } from '../src/stores/theme'
import type { LiveSocketOptions } from '../src/lib/ws'

function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } })
}

function mockFetch(routes: Record<string, (init?: RequestInit) => Response>) {
  const calls: { url: string; init?: RequestInit }[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      calls.push({ url, init })
      const key = `${init?.method ?? 'GET'} ${url.split('?')[0]}`
      const h = routes[key]
      if (!h) return jsonResponse(404, { error: `no route ${key}` })
      return h(init)
    }),
  )
  return calls
}

beforeEach(() => {
  setActivePinia(createPinia())
  vi.unstubAllGlobals()
  localStorage.clear()
})

describe('session store', () => {
  test('permissions, read-only and roles are the hub\'s, not derived from the role name', () => {
    const s = useSession()
    // A role the console has never heard of, and an admin the hub limits:
    // the console goes by what /api/auth/status says, not by a matrix.
    s.apply({ required: true, authenticated: true, sso: false, multi_site: false, exposed: false, rbac_users: true, bootstrap_password: false, permissions: ['view', 'audit'], read_only: true, roles: ['admin', 'viewer'], user: { username: 'x', role: 'inspector', site: '', actor_type: 'user' } })
    expect(s.can('view')).toBe(true)
    expect(s.can('audit')).toBe(true)
    expect(s.can('operate')).toBe(false)
    expect(s.readOnly).toBe(true)
    expect(s.roles).toEqual(['admin', 'viewer'])
    s.apply({ required: true, authenticated: true, sso: false, multi_site: false, exposed: false, rbac_users: true, bootstrap_password: false, permissions: ['view'], read_only: false, roles: ['admin'], user: { username: 'y', role: 'admin', site: '', actor_type: 'user' } })
    expect(s.can('admin')).toBe(false)
    expect(s.readOnly).toBe(false)
    s.expire()
    expect(s.can('view')).toBe(false)
  })

  test('auth off: everything is allowed as admin', async () => {
    mockFetch({ 'GET /api/auth/status': () => jsonResponse(200, { required: false, authenticated: false, sso: false, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: ['view', 'operate', 'analyze', 'devices', 'agents', 'admin', 'audit', 'global-admin'], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'] }) })
    const s = useSession()
    await s.refresh()
    expect(s.signedIn).toBe(true)
    expect(s.role).toBe('admin')
    expect(s.can('admin')).toBe(true)
  })

  test('signed-in viewer: view only; the SSO flag is kept', async () => {
    mockFetch({
      'GET /api/auth/status': () =>
        jsonResponse(200, { required: true, authenticated: true, sso: true, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: ['view'], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'], user: { username: 'v', role: 'viewer', site: '', actor_type: 'user' } }),
    })
    const s = useSession()
    await s.refresh()
    expect(s.signedIn).toBe(true)
    expect(s.sso).toBe(true)
    expect(s.can('view')).toBe(true)
    expect(s.can('operate')).toBe(false)
    expect(s.can('admin')).toBe(false)
    expect(s.siteBound).toBe(false)
  })

  test('a site-bound admin is marked so the all-sites audit log is hidden', () => {
    const s = useSession()
    s.apply({ required: true, authenticated: true, sso: false, multi_site: true, exposed: false, rbac_users: false, bootstrap_password: false, permissions: ['view', 'operate', 'analyze', 'devices', 'agents', 'admin', 'audit'], read_only: false, roles: ['global-admin', 'admin', 'site-admin', 'netops', 'auditor', 'analyst', 'viewer'], user: { username: 'b', role: 'site-admin', site: 'branch', actor_type: 'user' } })
    expect(s.can('admin')).toBe(true)
    expect(s.siteBound).toBe(true)
  })

  test('not signed in: nothing is allowed', async () => {
    mockFetch({ 'GET /api/auth/status': () => jsonResponse(200, { required: true, authenticated: false, sso: false, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: [], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'] }) })
    const s = useSession()
    await s.refresh()
    expect(s.signedIn).toBe(false)
    expect(s.can('view')).toBe(false)
  })

  test('login sends {password} alone, or {username, password}', async () => {
    let authed = false
    const calls = mockFetch({
      'POST /api/login': () => {
        authed = true
        return jsonResponse(200, { ok: true, token: 'x' })
      },
      'GET /api/auth/status': () =>
        jsonResponse(200, { required: true, authenticated: authed, sso: false, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: authed ? ['view', 'operate', 'analyze', 'devices', 'agents', 'admin', 'audit', 'global-admin'] : [], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'], user: authed ? { username: 'admin', role: 'admin', site: '', actor_type: 'legacy' } : undefined }),
    })
    const s = useSession()
    expect(await s.login('', 'pw-123456')).toEqual({ ok: true })
    expect(JSON.parse(String(calls[0].init?.body))).toEqual({ password: 'pw-123456' })
    expect(calls[0].init?.credentials).toBe('same-origin')
    expect(s.can('admin')).toBe(true)
    await s.login('  alice ', 'pw-123456')
    expect(JSON.parse(String(calls[2].init?.body))).toEqual({ username: 'alice', password: 'pw-123456' })
  })

  test('401 and 429 give clear messages with the wait', async () => {
    let status = 401
    mockFetch({
      'POST /api/login': () =>
        status === 401 ? jsonResponse(401, { error: 'wrong credentials' }) : jsonResponse(429, { error: 'too many failed logins' }, { 'Retry-After': '42' }),
    })
    const s = useSession()
    expect(await s.login('', 'x')).toEqual({ ok: false, message: 'Wrong password.' })
    expect(await s.login('bob', 'x')).toEqual({ ok: false, message: 'Wrong username or password.' })
    status = 429
    expect(await s.login('bob', 'x')).toEqual({ ok: false, retryAfter: 42, message: 'Too many failed sign-ins from this address. Try again in 42 s.' })
  })

  test('a 429 for the account is worded for the account', async () => {
    mockFetch({
      'POST /api/login': () => jsonResponse(429, { error: 'too many failed sign-ins for this account; try again in 2 seconds' }, { 'Retry-After': '2' }),
    })
    expect(await useSession().login('alice', 'x')).toEqual({ ok: false, retryAfter: 2, message: 'Too many failed sign-ins for this account. Try again in 2 s.' })
  })

  test('authentication off on the network: the session is marked exposed', async () => {
    mockFetch({ 'GET /api/auth/status': () => jsonResponse(200, { required: false, authenticated: false, sso: false, multi_site: false, exposed: true, rbac_users: false, bootstrap_password: false, permissions: ['view', 'operate', 'analyze', 'devices', 'agents', 'admin', 'audit', 'global-admin'], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'] }) })
    const s = useSession()
    await s.refresh()
    expect(s.exposed).toBe(true)
  })

  test('the bootstrap password refused under RBAC says so, not "wrong password", and is remembered', async () => {
    localStorage.removeItem(RBAC_KEY)
    // the hub's ErrLegacyDisabled text (app/auth/errors.go)
    mockFetch({ 'POST /api/login': () => jsonResponse(401, { error: 'RBAC is enabled: the legacy password is disabled while an enabled admin user exists; sign in with a username and password' }) })
    const r = await useSession().login('', 'x')
    expect(r).toEqual({ ok: false, legacyDisabled: true, message: 'The bootstrap password is disabled because RBAC users exist. Sign in with your username and password.' })
    expect(r.message).not.toMatch(/wrong/i)
    expect(localStorage.getItem(RBAC_KEY)).toBe('1')
    localStorage.removeItem(RBAC_KEY)
  })

  test('logout ends the session even when the call fails', async () => {
    mockFetch({
      'POST /api/logout': () => jsonResponse(401, { error: 'oturum gerekli', auth_required: true }),
      'GET /api/auth/status': () => jsonResponse(200, { required: true, authenticated: false, sso: false, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: [], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'] }),
    })
    const s = useSession()
    s.apply({ required: true, authenticated: true, sso: false, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: ['view', 'operate', 'analyze', 'devices', 'agents', 'admin', 'audit', 'global-admin'], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'], user: { username: 'a', role: 'admin', site: '', actor_type: 'user' } })
    await s.logout()
    expect(s.signedIn).toBe(false)
  })
})

describe('live store', () => {
  test('keeps the latest tick and the socket state; one socket for several users', () => {
    let opts: LiveSocketOptions | null = null
    const sock = { start: vi.fn(), stop: vi.fn(), retryNow: vi.fn() }
    const factory = vi.fn((o: LiveSocketOptions) => {
      opts = o
      return sock
    })
    setSocketFactory(factory)
    const live = useLive()
    live.start('ws://x/ws')
    live.start('ws://x/ws')
    expect(factory).toHaveBeenCalledOnce()
    expect(sock.start).toHaveBeenCalledOnce()
    opts!.onStatus!({ state: 'open', attempt: 0, delayMs: 0, retryAt: 0 })
    expect(live.connected).toBe(true)
    opts!.onMessage({ type: 'tick', stats: { bps_in: 8 } })
    opts!.onMessage({ type: 'other' })
    expect(live.ticks).toBe(1)
    expect(live.tick?.stats.bps_in).toBe(8)
    opts!.onStatus!({ state: 'retrying', attempt: 2, delayMs: 2000, retryAt: 5 })
    expect(live.disconnected).toBe(true)
    live.retryNow()
    expect(sock.retryNow).toHaveBeenCalled()
    live.stop()
    expect(sock.stop).not.toHaveBeenCalled()
    live.stop()
    expect(sock.stop).toHaveBeenCalledOnce()
    setSocketFactory(null)
  })

  test('before a retry it checks the session and stops when signed out', async () => {
    let opts: LiveSocketOptions | null = null
    setSocketFactory((o) => {
      opts = o
      return { start: vi.fn(), stop: vi.fn(), retryNow: vi.fn() }
    })
    let authed = true
    mockFetch({
      'GET /api/auth/status': () =>
        jsonResponse(200, { required: true, authenticated: authed, sso: false, multi_site: false, exposed: false, rbac_users: false, bootstrap_password: false, permissions: authed ? ['view'] : [], read_only: false, roles: ['admin', 'netops', 'auditor', 'analyst', 'viewer'], user: authed ? { username: 'a', role: 'viewer', site: '', actor_type: 'user' } : undefined }),
    })
    const ended: string[] = []
    setUnauthorizedHandler((p) => ended.push(p))
    useLive().start('ws://x/ws')
    expect(await opts!.beforeRetry!()).toBe(true)
    expect(ended).toEqual([])
    authed = false
    expect(await opts!.beforeRetry!()).toBe(false)
    expect(ended).toEqual(['/ws']) // handed to sign-in, not left "Connecting…"
    expect(useLive().socket).toBeNull()
    vi.stubGlobal('fetch', vi.fn(async () => Promise.reject(new TypeError('network down'))))
    expect(await opts!.beforeRetry!()).toBe(true) // hub unreachable (restarting): keep trying
    setUnauthorizedHandler(null)
    setSocketFactory(null)
  })

  test('the hub closing the feed with 4001 (session ended) sends the person to sign in at once', () => {
    let opts: LiveSocketOptions | null = null
    const sock = { start: vi.fn(), stop: vi.fn(), retryNow: vi.fn() }
    setSocketFactory((o) => {
      opts = o
      return sock
    })
    const ended: string[] = []
    setUnauthorizedHandler((p) => ended.push(p))
    const live = useLive()
    live.start('ws://x/ws')
    expect(opts!.endCodes).toEqual([CLOSE_SESSION_ENDED])
    opts!.onEnded!(CLOSE_SESSION_ENDED, 'session ended: sign in again')
    expect(ended).toEqual(['/ws'])
    expect(sock.stop).toHaveBeenCalled()
    expect(live.socket).toBeNull()
    live.start('ws://x/ws') // signed in again: a new socket
    expect(live.socket).not.toBeNull()
    setUnauthorizedHandler(null)
    setSocketFactory(null)
  })
})

describe('theme store', () => {
  test('follows the system until a choice is made, and remembers it', () => {
    const t = useTheme()
    t.init()
    expect(t.mode).toBe('system')
    expect(document.documentElement.dataset.theme).toBe(t.system)
    t.set('dark')
    expect(document.documentElement.dataset.theme).toBe('dark')
    expect(localStorage.getItem('netmon.theme')).toBe('dark')
    t.cycle()
    expect(t.mode).toBe('system')
    t.cycle()
    expect(t.mode).toBe('light')
    expect(document.documentElement.dataset.theme).toBe('light')
    setActivePinia(createPinia())
    expect(useTheme().mode).toBe('light')
  })
})
