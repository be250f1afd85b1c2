import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest'
import { backoffDelay, LiveSocket, sameOriginWsUrl, type SocketStatus, type WebSocketLike } from '../src/lib/ws'

class FakeSocket implements WebSocketLike {
  static all: FakeSocket[] = []
  onopen: ((ev: unknown) => void) | null = null
  onmessage: ((ev: { data: unknown }) => void) | null = null
  onclose: ((ev: { code?: number; reason?: string }) => void) | null = null
  onerror: ((ev: unknown) => void) | null = null
  closed = false
  constructor(public url: string) {
    FakeSocket.all.push(this)
  }
  close(): void {
    this.closed = true
  }
  open(): void {
    this.onopen?.({})
  }
  send(data: unknown): void {
    this.onmessage?.({ data: typeof data === 'string' ? data : JSON.stringify(data) })
  }
  drop(code = 1006, reason = ''): void {
    this.onclose?.({ code, reason })
  }
}

const last = () => FakeSocket.all[FakeSocket.all.length - 1]

describe('backoffDelay', () => {
  const o = { baseMs: 1000, maxMs: 30_000, factor: 2, jitter: 0.2 }
  test('doubles from the base up to the cap', () => {
    const mid = () => 0.5 // no jitter
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, o, mid))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000])
  })
  test('jitter spreads by +/- 20% and never exceeds the cap', () => {
    expect(backoffDelay(1, o, () => 0)).toBe(800)
    expect(backoffDelay(1, o, () => 0.999999)).toBe(1200)
    expect(backoffDelay(10, o, () => 0.999999)).toBe(30000)
    expect(backoffDelay(10, o, () => 0)).toBe(24000)
  })
  test('attempt 0 counts as the first', () => {
    expect(backoffDelay(0, o, () => 0.5)).toBe(1000)
  })
})

describe('LiveSocket', () => {
  let statuses: SocketStatus[]
  let messages: unknown[]

  beforeEach(() => {
    vi.useFakeTimers()
    FakeSocket.all = []
    statuses = []
    messages = []
  })
  afterEach(() => vi.useRealTimers())

  function make(extra: Partial<ConstructorParameters<typeof LiveSocket>[0]> = {}) {
    return new LiveSocket({
      url: 'ws://hub/ws',
      onMessage: (d) => messages.push(d),
      onStatus: (s) => statuses.push(s),
      create: (u) => new FakeSocket(u),
      random: () => 0.5,
      now: () => Date.now(),
      staleMs: 5000,
      ...extra,
    })
  }

  test('connects, parses JSON ticks and reports open', () => {
    const s = make()
    s.start()
    expect(last().url).toBe('ws://hub/ws')
    expect(s.current.state).toBe('connecting')
    last().open()
    expect(s.current.state).toBe('open')
    last().send({ type: 'tick', n: 1 })
    last().send('not json')
    expect(messages).toEqual([{ type: 'tick', n: 1 }])
    s.stop()
  })

  test('reconnects after a drop with growing delays, and resets after a message', async () => {
    const s = make()
    s.start()
    last().open()
    last().drop()
    expect(s.current).toMatchObject({ state: 'retrying', attempt: 1, delayMs: 1000 })
    expect(FakeSocket.all).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(999)
    expect(FakeSocket.all).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(FakeSocket.all).toHaveLength(2)
    last().drop() // fails again before any message
    expect(s.current).toMatchObject({ state: 'retrying', attempt: 2, delayMs: 2000 })
    await vi.advanceTimersByTimeAsync(2000)
    last().drop()
    expect(s.current).toMatchObject({ attempt: 3, delayMs: 4000 })
    await vi.advanceTimersByTimeAsync(4000)
    expect(FakeSocket.all).toHaveLength(4)
    last().open()
    last().send({ type: 'tick' })
    expect(s.current).toMatchObject({ state: 'open', attempt: 0 })
    last().drop()
    expect(s.current).toMatchObject({ state: 'retrying', attempt: 1, delayMs: 1000 })
    s.stop()
  })

  test('a silent socket is treated as dropped', async () => {
    const s = make()
    s.start()
    last().open()
    last().send({ type: 'tick' })
    await vi.advanceTimersByTimeAsync(4000)
    last().send({ type: 'tick' }) // keeps it alive
    await vi.advanceTimersByTimeAsync(4999)
    expect(s.current.state).toBe('open')
    await vi.advanceTimersByTimeAsync(1)
    expect(s.current.state).toBe('retrying')
    expect(FakeSocket.all[0].closed).toBe(true)
    s.stop()
  })

  test('stop closes the socket and cancels the pending retry', async () => {
    const s = make()
    s.start()
    last().drop()
    s.stop()
    expect(s.current.state).toBe('closed')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(FakeSocket.all).toHaveLength(1)
  })

  test('retryNow skips the wait', () => {
    const s = make()
    s.start()
    last().drop()
    s.retryNow()
    expect(FakeSocket.all).toHaveLength(2)
    s.stop()
  })

  test('beforeRetry can end the retries (the session is gone)', async () => {
    const beforeRetry = vi.fn(async () => false)
    const s = make({ beforeRetry })
    s.start()
    last().drop()
    await vi.advanceTimersByTimeAsync(1000)
    expect(beforeRetry).toHaveBeenCalledOnce()
    expect(s.current.state).toBe('closed')
    expect(FakeSocket.all).toHaveLength(1)
  })

  test('a close code in endCodes stops for good and reports it; other codes are retried', async () => {
    const ended: [number, string][] = []
    const s = make({ endCodes: [4001], onEnded: (c, r) => ended.push([c, r]) })
    s.start()
    last().open()
    last().drop(1001, 'hub shutting down') // a restart: retried
    expect(s.current.state).toBe('retrying')
    await vi.advanceTimersByTimeAsync(2000)
    expect(FakeSocket.all).toHaveLength(2)
    last().open()
    last().drop(4001, 'session ended: sign in again')
    expect(ended).toEqual([[4001, 'session ended: sign in again']])
    expect(s.current.state).toBe('closed')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(FakeSocket.all).toHaveLength(2) // no retry into a refusal
  })

  test('status reports the time of the next attempt', () => {
    vi.setSystemTime(1_000_000)
    const s = make()
    s.start()
    last().drop()
    expect(statuses.at(-1)).toMatchObject({ state: 'retrying', retryAt: 1_001_000 })
    s.stop()
  })

  test('a socket that cannot be created is retried', async () => {
    let fail = true
    const s = make({
      create: (u) => {
        if (fail) throw new Error('bad url')
        return new FakeSocket(u)
      },
    })
    s.start()
    expect(s.current.state).toBe('retrying')
    fail = false
    await vi.advanceTimersByTimeAsync(1000)
    expect(FakeSocket.all).toHaveLength(1)
    s.stop()
  })
})

test('same-origin WebSocket URL follows the page scheme', () => {
  expect(sameOriginWsUrl('/ws', { protocol: 'http:', host: 'hub:8080' })).toBe('ws://hub:8080/ws')
  expect(sameOriginWsUrl('/ws', { protocol: 'https:', host: 'netmon.example' })).toBe('wss://netmon.example/ws')
})
