// The live feed: the latest /ws tick and the socket's state, for the Live
// page. The socket runs while someone uses it (start/stop by the page).
import { defineStore } from 'pinia'
import { markRaw } from 'vue'
import type { Tick } from '../api/types'
import { sessionEnded } from '../api/client'
import { LiveSocket, sameOriginWsUrl, type LiveSocketOptions, type SocketStatus } from '../lib/ws'
import { useSession } from './session'
import { notifyDesktop } from '../lib/desktop'

export type SocketFactory = (opts: LiveSocketOptions) => Pick<LiveSocket, 'start' | 'stop' | 'retryNow'>

let factory: SocketFactory = (o) => new LiveSocket(o)

/** The hub's close code for a socket whose session ended (app/live CloseSessionEnded). */
export const CLOSE_SESSION_ENDED = 4001

/** A tick older than this, or a socket that is not open, makes the numbers stale. */
export const STALE_MS = 3000

/** Tests swap the socket implementation. */
export function setSocketFactory(f: SocketFactory | null): void {
  factory = f ?? ((o) => new LiveSocket(o))
}

export const useLive = defineStore('live', {
  state: () => ({
    tick: null as Tick | null,
    status: { state: 'idle', attempt: 0, delayMs: 0, retryAt: 0 } as SocketStatus,
    ticks: 0,
    lastTickAt: 0,
    users: 0,
    socket: null as Pick<LiveSocket, 'start' | 'stop' | 'retryNow'> | null,
  }),
  getters: {
    connected: (s): boolean => s.status.state === 'open',
    /** Dropped and waiting to reconnect (after at least one failure). */
    disconnected: (s): boolean => s.status.state === 'retrying' || (s.status.state === 'connecting' && s.status.attempt > 0),
  },
  actions: {
    start(url: string = sameOriginWsUrl('/ws')): void {
      this.users++
      if (this.socket) return
      const session = useSession()
      const sock = factory({
        url,
        onMessage: (data) => this.receive(data),
        onStatus: (s) => {
          this.status = { ...s }
        },
        // The hub closes the socket of a session that ended (logout,
        // password reset, role change) with 4001: go to sign in at once.
        endCodes: [CLOSE_SESSION_ENDED],
        onEnded: () => this.ended(),
        // Any other drop (a restart, a network blip) is retried; ask the hub
        // first whether the session survived, and send the person to sign
        // in when it did not, instead of stopping silently.
        beforeRetry: async () => {
          try {
            await session.refresh()
          } catch {
            return true // the hub is unreachable (restarting): keep trying
          }
          if (!session.signedIn) this.ended()
          return session.signedIn
        },
      })
      this.socket = markRaw(sock)
      sock.start()
    },
    stop(): void {
      this.users = Math.max(0, this.users - 1)
      if (this.users > 0 || !this.socket) return
      this.socket.stop()
      this.socket = null
    },
    /** The session is gone: forget the socket and hand over to sign-in. */
    ended(): void {
      this.socket?.stop()
      this.socket = null
      this.users = 0
      sessionEnded('/ws')
    },
    retryNow(): void {
      this.socket?.retryNow()
    },
    receive(data: unknown): void {
      if (!data || typeof data !== 'object' || (data as { type?: unknown }).type !== 'tick') return
      this.tick = markRaw(data as Tick)
      notifyDesktop(this.tick.alert_events)
      this.ticks++
      this.lastTickAt = Date.now()
    },
  },
})
