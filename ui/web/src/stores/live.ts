// The live feed: the latest /ws tick and the socket's state, for the Live
// page. The socket runs while someone uses it (start/stop by the page).
import { defineStore } from 'pinia'
import { markRaw } from 'vue'
import type { Tick } from '../api/types'
import { LiveSocket, sameOriginWsUrl, type LiveSocketOptions, type SocketStatus } from '../lib/ws'
import { useSession } from './session'

export type SocketFactory = (opts: LiveSocketOptions) => Pick<LiveSocket, 'start' | 'stop' | 'retryNow'>

let factory: SocketFactory = (o) => new LiveSocket(o)

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
        // A drop may mean the session ended: ask the hub before retrying,
        // and stop (the router sends the person to sign in) when it did.
        beforeRetry: async () => {
          try {
            await session.refresh()
          } catch {
            return true // the hub is unreachable: keep trying
          }
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
    retryNow(): void {
      this.socket?.retryNow()
    },
    receive(data: unknown): void {
      if (!data || typeof data !== 'object' || (data as { type?: unknown }).type !== 'tick') return
      this.tick = markRaw(data as Tick)
      this.ticks++
      this.lastTickAt = Date.now()
    },
  },
})
