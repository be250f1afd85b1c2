// Clock times as operators read them: a 24-hour clock everywhere, in the
// browser's time zone, which is named next to every chart and on every
// absolute time (Grafana's habit), so a screenshot says which zone it is in.

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n)
}

/** "+01:00" for the offset of the browser's zone at ts (Unix seconds). */
export function utcOffset(ts: number = Date.now() / 1000): string {
  const min = -new Date(ts * 1000).getTimezoneOffset()
  const sign = min >= 0 ? '+' : '-'
  const a = Math.abs(min)
  return `${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`
}

/** The browser's zone, "Europe/Berlin (UTC+01:00)" or "UTC". */
export function zoneLabel(ts?: number): string {
  let name = ''
  try {
    name = Intl.DateTimeFormat().resolvedOptions().timeZone ?? ''
  } catch {
    name = ''
  }
  const off = utcOffset(ts)
  if (name === 'UTC' || name === 'Etc/UTC') return 'UTC'
  return name ? `${name} (UTC${off})` : `UTC${off}`
}

/** "15:04:05" (24-hour clock, local zone). */
export function clock(ts: number, seconds = true): string {
  const d = new Date(ts * 1000)
  return seconds ? `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` : `${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** "01-02" month and day (local zone). */
export function monthDay(ts: number): string {
  const d = new Date(ts * 1000)
  return `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
}

/**
 * Labels for a time axis spanning spanSec: seconds for the last minutes,
 * hours and minutes for a day, the date at midnight (or on every tick
 * beyond three days).
 */
export function axisTime(ts: number, spanSec: number): string {
  if (spanSec <= 600) return clock(ts, true)
  const d = new Date(ts * 1000)
  if (spanSec > 3 * 86400) return `${monthDay(ts)} ${clock(ts, false)}`
  if (d.getHours() === 0 && d.getMinutes() === 0) return monthDay(ts)
  return clock(ts, false)
}

/** Minutes of a window named as the hub names them (FlowWindow: 15m, 1h,
 * 6h, 24h; also d for days); 0 for a name of another shape. */
export function windowMinutes(name: string): number {
  const m = /^(\d+)([mhd])$/.exec(name)
  if (!m) return 0
  return Number(m[1]) * { m: 1, h: 60, d: 1440 }[m[2] as 'm' | 'h' | 'd']
}
