import { afterEach, describe, expect, it, vi } from 'vitest'
import { desktopEnabled, disableDesktop, enableDesktop, notifyDesktop } from '../src/lib/desktop'

// A stand-in for the browser's Notification: records what was shown.
function fakeNotification(permission: NotificationPermission, answer: NotificationPermission) {
  const shown: { title: string; body?: string; tag?: string }[] = []
  const N = vi.fn(function (this: unknown, title: string, opts?: NotificationOptions) {
    shown.push({ title, body: opts?.body, tag: opts?.tag })
  }) as unknown as typeof Notification & { permission: NotificationPermission }
  Object.assign(N, { permission, requestPermission: vi.fn(async () => answer) })
  vi.stubGlobal('Notification', N)
  return shown
}

describe('desktop notifications', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    localStorage.clear()
  })

  it('shows one notification per event once allowed here', async () => {
    const shown = fakeNotification('granted', 'granted')
    notifyDesktop([{ id: 1, kind: 'port', key: 'k', message: 'm1' }])
    expect(shown).toEqual([]) // allowed by the browser, not chosen here yet
    expect(await enableDesktop()).toBe(true)
    expect(desktopEnabled()).toBe(true)
    notifyDesktop([
      { id: 7, kind: 'port', key: 'k', message: 'connection to 203.0.113.9:4444' },
      { id: 8, kind: 'bw', key: 'hub|in', message: 'bandwidth' },
    ])
    expect(shown).toEqual([
      { title: 'netmon: port', body: 'connection to 203.0.113.9:4444', tag: 'netmon-alert-7' },
      { title: 'netmon: bw', body: 'bandwidth', tag: 'netmon-alert-8' },
    ])
    disableDesktop()
    notifyDesktop([{ id: 9, kind: 'proc', key: 'k', message: 'm' }])
    expect(shown.length).toBe(2)
  })

  it('stays off when the browser refuses', async () => {
    const shown = fakeNotification('default', 'denied')
    expect(await enableDesktop()).toBe(false)
    notifyDesktop([{ id: 1, kind: 'port', key: 'k', message: 'm' }])
    expect(shown).toEqual([])
  })
})
