// LiveSocket keeps one WebSocket to the hub's /ws open: it reconnects
// after a drop with exponential backoff and jitter, resets the backoff once
// a message arrives, and treats a silent socket (no tick for staleMs) as
// dropped. Everything time- or network-dependent is injectable for tests.

export type SocketState = 'idle' | 'connecting' | 'open' | 'retrying' | 'closed'

export interface SocketStatus {
  state: SocketState
  /** consecutive failed attempts since the last message */
  attempt: number
  /** delay before the next attempt, while retrying */
  delayMs: number
  /** Date.now() of the next attempt, while retrying */
  retryAt: number
}

/** The subset of the browser WebSocket that LiveSocket uses. */
export interface WebSocketLike {
  onopen: ((ev: unknown) => void) | null
  onmessage: ((ev: { data: unknown }) => void) | null
  onclose: ((ev: { code?: number; reason?: string }) => void) | null
  onerror: ((ev: unknown) => void) | null
  close(code?: number, reason?: string): void
}

export type WebSocketFactory = (url: string) => WebSocketLike

export interface BackoffOptions {
  baseMs: number
  maxMs: number
  factor: number
  /** +/- fraction of the delay, e.g. 0.2 */
  jitter: number
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 30_000, factor: 2, jitter: 0.2 }

/**
 * Delay before attempt n (1-based): base * factor^(n-1), capped at max,
 * then spread by +/- jitter. random() is in [0, 1).
 */
export function backoffDelay(attempt: number, o: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const n = Math.max(1, attempt)
  const raw = Math.min(o.maxMs, o.baseMs * Math.pow(o.factor, n - 1))
  const spread = raw * o.jitter * (2 * random() - 1)
  return Math.max(0, Math.round(Math.min(o.maxMs, raw + spread)))
}

export interface LiveSocketOptions {
  url: string
  onMessage: (data: unknown) => void
  onStatus?: (s: SocketStatus) => void
  /** called before each reconnect attempt; may decide to give up (return false) */
  beforeRetry?: () => Promise<boolean> | boolean
  /**
   * Close codes after which reconnecting is pointless (the hub's 4001:
   * the session ended): the socket stops at once and onEnded is called,
   * instead of retrying into a refusal.
   */
  endCodes?: number[]
  /** called when the hub ended the feed with one of endCodes */
  onEnded?: (code: number, reason: string) => void
  create?: WebSocketFactory
  backoff?: Partial<BackoffOptions>
  /** a socket with no message for this long is closed and retried */
  staleMs?: number
  random?: () => number
  now?: () => number
  setTimer?: (fn: () => void, ms: number) => unknown
  clearTimer?: (id: unknown) => void
}

/** Absolute ws:// or wss:// URL of a path on the page's own origin. */
export function sameOriginWsUrl(path: string, loc: { protocol: string; host: string } = window.location): string {
  return `${loc.protocol === 'https:' ? 'wss:' : 'ws:'}//${loc.host}${path}`
}

export class LiveSocket {
  private ws: WebSocketLike | null = null
  private retryTimer: unknown = null
  private staleTimer: unknown = null
  private attempt = 0
  private stopped = true
  private status: SocketStatus = { state: 'idle', attempt: 0, delayMs: 0, retryAt: 0 }
  private readonly o: Required<Omit<LiveSocketOptions, 'onStatus' | 'beforeRetry' | 'backoff' | 'onEnded'>> &
    Pick<LiveSocketOptions, 'onStatus' | 'beforeRetry' | 'onEnded'> & { backoff: BackoffOptions }

  constructor(opts: LiveSocketOptions) {
    this.o = {
      create: (url) => new WebSocket(url) as unknown as WebSocketLike,
      staleMs: 10_000,
      endCodes: [],
      random: Math.random,
      now: () => Date.now(),
      setTimer: (fn, ms) => setTimeout(fn, ms),
      clearTimer: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
      ...opts,
      backoff: { ...DEFAULT_BACKOFF, ...(opts.backoff ?? {}) },
    }
  }

  get current(): SocketStatus {
    return this.status
  }

  start(): void {
    if (!this.stopped) return
    this.stopped = false
    this.attempt = 0
    this.connect()
  }

  stop(): void {
    this.stopped = true
    this.clearTimers()
    const ws = this.ws
    this.ws = null
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null
      try {
        ws.close(1000, 'client leaving')
      } catch {
        /* already closed */
      }
    }
    this.setStatus({ state: 'closed', attempt: this.attempt, delayMs: 0, retryAt: 0 })
  }

  /** Reconnect now (the "retry now" button), skipping the wait. */
  retryNow(): void {
    if (this.stopped || this.status.state !== 'retrying') return
    this.clearTimers()
    this.connect()
  }

  private setStatus(s: SocketStatus): void {
    this.status = s
    this.o.onStatus?.(s)
  }

  private clearTimers(): void {
    if (this.retryTimer !== null) this.o.clearTimer(this.retryTimer)
    if (this.staleTimer !== null) this.o.clearTimer(this.staleTimer)
    this.retryTimer = this.staleTimer = null
  }

  private armStale(): void {
    if (this.staleTimer !== null) this.o.clearTimer(this.staleTimer)
    this.staleTimer = this.o.setTimer(() => {
      this.staleTimer = null
      this.drop()
    }, this.o.staleMs)
  }

  private connect(): void {
    if (this.stopped) return
    this.setStatus({ state: 'connecting', attempt: this.attempt, delayMs: 0, retryAt: 0 })
    let ws: WebSocketLike
    try {
      ws = this.o.create(this.o.url)
    } catch {
      this.scheduleRetry()
      return
    }
    this.ws = ws
    ws.onopen = () => {
      if (this.ws !== ws) return
      this.setStatus({ state: 'open', attempt: this.attempt, delayMs: 0, retryAt: 0 })
      this.armStale()
    }
    ws.onmessage = (ev) => {
      if (this.ws !== ws) return
      this.attempt = 0
      if (this.status.state !== 'open' || this.status.attempt !== 0) {
        this.setStatus({ state: 'open', attempt: 0, delayMs: 0, retryAt: 0 })
      }
      this.armStale()
      let data: unknown = ev.data
      if (typeof data === 'string') {
        try {
          data = JSON.parse(data)
        } catch {
          return
        }
      }
      this.o.onMessage(data)
    }
    ws.onerror = () => {
      /* onclose follows and schedules the retry */
    }
    ws.onclose = (ev) => {
      if (this.ws !== ws) return
      const code = ev?.code ?? 0
      if (this.o.endCodes.includes(code)) {
        this.stop()
        this.o.onEnded?.(code, ev?.reason ?? '')
        return
      }
      this.drop()
    }
  }

  /** The socket is gone (closed, failed or silent): schedule a reconnect. */
  private drop(): void {
    const ws = this.ws
    this.ws = null
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null
      try {
        ws.close()
      } catch {
        /* ignore */
      }
    }
    if (this.stopped) return
    this.scheduleRetry()
  }

  private scheduleRetry(): void {
    this.clearTimers()
    this.attempt++
    const delayMs = backoffDelay(this.attempt, this.o.backoff, this.o.random)
    this.setStatus({ state: 'retrying', attempt: this.attempt, delayMs, retryAt: this.o.now() + delayMs })
    this.retryTimer = this.o.setTimer(async () => {
      this.retryTimer = null
      if (this.stopped) return
      if (this.o.beforeRetry) {
        let go = true
        try {
          go = await this.o.beforeRetry()
        } catch {
          go = true
        }
        if (!go) {
          this.stop()
          return
        }
        if (this.stopped) return
      }
      this.connect()
    }, delayMs)
  }
}
