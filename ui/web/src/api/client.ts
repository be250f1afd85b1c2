// The console's one way to call the hub: same-origin fetch with the
// session cookie (never a token in storage), JSON in and out, and errors
// as ApiError with the hub's message, the status and Retry-After.

export class ApiError extends Error {
  readonly status: number
  /** seconds from a Retry-After header (429), if any */
  readonly retryAfter: number | null
  readonly body: unknown

  constructor(status: number, message: string, retryAfter: number | null = null, body: unknown = null) {
    super(message)
    this.name = 'ApiError'
    this.status = status
    this.retryAfter = retryAfter
    this.body = body
  }
}

export type Query = Record<string, string | number | boolean | null | undefined>

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  query?: Query
  body?: unknown
  signal?: AbortSignal
}

type UnauthorizedHandler = (path: string) => void
let onUnauthorized: UnauthorizedHandler | null = null

/** Registers what happens when a protected call answers 401 (sign-in page). */
export function setUnauthorizedHandler(h: UnauthorizedHandler | null): void {
  onUnauthorized = h
}

/**
 * Reports that the session ended outside a fetch (the live socket closed
 * with "session ended", or the hub says signed out before a reconnect):
 * the same as a 401 from a protected call.
 */
export function sessionEnded(path: string): void {
  onUnauthorized?.(path)
}

/** "/api/x?a=1&b=2", leaving out empty values. */
export function buildUrl(path: string, query?: Query): string {
  if (!query) return path
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue
    q.set(k, String(v))
  }
  const s = q.toString()
  return s ? `${path}?${s}` : path
}

/** Parses a Retry-After header given in seconds or as an HTTP date. */
export function parseRetryAfter(v: string | null, nowMs: number = Date.now()): number | null {
  if (!v) return null
  const n = Number(v.trim())
  if (Number.isFinite(n) && n >= 0) return Math.ceil(n)
  const t = Date.parse(v)
  if (Number.isNaN(t)) return null
  return Math.max(0, Math.ceil((t - nowMs) / 1000))
}

function messageFor(status: number, body: unknown): string {
  if (body && typeof body === 'object' && 'error' in body && typeof (body as { error: unknown }).error === 'string') {
    return (body as { error: string }).error
  }
  if (typeof body === 'string' && body.trim() && body.length < 300) return body.trim()
  return `request failed with HTTP ${status}`
}

export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' }
  const init: RequestInit = {
    method: opts.method ?? 'GET',
    credentials: 'same-origin',
    headers,
    signal: opts.signal,
  }
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json'
    init.body = JSON.stringify(opts.body)
  }
  const res = await fetch(buildUrl(path, opts.query), init)
  const text = await res.text()
  let body: unknown = null
  if (text) {
    try {
      body = JSON.parse(text)
    } catch {
      body = text
    }
  }
  if (!res.ok) {
    if (res.status === 401 && path !== '/api/login' && onUnauthorized) onUnauthorized(path)
    throw new ApiError(res.status, messageFor(res.status, body), parseRetryAfter(res.headers.get('Retry-After')), body)
  }
  return body as T
}

/** A body the console does not parse (a rendered report) with its headers. */
export interface RawResponse {
  blob: Blob
  headers: Headers
}

/**
 * GET of a non-JSON answer (HTML or PDF report) with the session cookie,
 * like api(): a refusal is an ApiError with the hub's JSON message.
 */
export async function getRaw(path: string, query?: Query, signal?: AbortSignal): Promise<RawResponse> {
  const res = await fetch(buildUrl(path, query), { method: 'GET', credentials: 'same-origin', signal })
  if (!res.ok) throw await refusal(res, path)
  return { blob: await res.blob(), headers: res.headers }
}

/** The ApiError of a refused non-JSON call, with the hub's JSON message. */
async function refusal(res: Response, path: string): Promise<ApiError> {
  const text = await res.text()
  let body: unknown = text
  try {
    body = text ? JSON.parse(text) : null
  } catch {
    /* not JSON: the text itself */
  }
  if (res.status === 401 && onUnauthorized) onUnauthorized(path)
  return new ApiError(res.status, messageFor(res.status, body), parseRetryAfter(res.headers.get('Retry-After')), body)
}

/**
 * POST of a JSON body whose answer is read as a stream (the assistant's
 * text/event-stream): the same cookie and headers as api(), and a refusal
 * before the stream starts is an ApiError with the hub's message.
 */
export async function apiStream(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { Accept: 'text/event-stream', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  })
  if (!res.ok) throw await refusal(res, path)
  return res
}

export const get = <T>(path: string, query?: Query, signal?: AbortSignal) => api<T>(path, { query, signal })
export const post = <T>(path: string, body?: unknown) => api<T>(path, { method: 'POST', body })
export const put = <T>(path: string, body?: unknown) => api<T>(path, { method: 'PUT', body })
export const patch = <T>(path: string, body?: unknown) => api<T>(path, { method: 'PATCH', body })
export const del = <T>(path: string) => api<T>(path, { method: 'DELETE' })

/** A short human message for any error thrown by api(). */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.message
  if (e instanceof Error) {
    if (e.name === 'AbortError') return 'request cancelled'
    return `the hub did not answer (${e.message})`
  }
  return String(e)
}
