// Desktop notifications (spec 6.4 channel "desktop"): the console shows a
// browser notification for each new alert event the /ws tick carries,
// once the person allowed it here and the hub's notifiers.desktop is on
// (the page that enables it checks). The choice is kept per browser.
const KEY = 'netmon.desktop-notify'

export function desktopSupported(): boolean {
  return typeof window !== 'undefined' && 'Notification' in window
}

export function desktopEnabled(): boolean {
  return desktopSupported() && Notification.permission === 'granted' && localStorage.getItem(KEY) === '1'
}

/** Ask the browser for permission and remember the choice. */
export async function enableDesktop(): Promise<boolean> {
  if (!desktopSupported()) return false
  const p = await Notification.requestPermission()
  localStorage.setItem(KEY, p === 'granted' ? '1' : '0')
  return p === 'granted'
}

export function disableDesktop(): void {
  localStorage.setItem(KEY, '0')
}

export interface DesktopEvent {
  id: number
  kind: string
  key: string
  message: string
}

/** Show one notification per event; the tag keeps a repeat from stacking. */
export function notifyDesktop(events: DesktopEvent[] | null | undefined): void {
  if (!events?.length || !desktopEnabled()) return
  for (const e of events.slice(0, 5)) {
    new Notification(`netmon: ${e.kind}`, { body: e.message, tag: `netmon-alert-${e.id}` })
  }
}
