// Numbers and times formatted for people: bit rates with SI prefixes
// (1 kbit/s = 1000 bit/s), byte sizes with binary prefixes (1 KiB = 1024 B),
// counts with digit grouping, relative times with the absolute time kept
// for a hover title.

const SI = ['', 'k', 'M', 'G', 'T', 'P']
const BIN = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']

/** Three significant digits, no trailing ".0" clutter beyond them. */
function sig3(v: number): string {
  if (v === 0) return '0'
  const abs = Math.abs(v)
  if (abs >= 100) return v.toFixed(0)
  if (abs >= 10) return v.toFixed(1)
  return v.toFixed(2)
}

function finite(n: number | null | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) ? n : 0
}

/** formatBits(1_234_000) === "1.23 Mbit/s". */
export function formatBits(bitsPerSecond: number | null | undefined): string {
  let v = finite(bitsPerSecond)
  let i = 0
  while (Math.abs(v) >= 1000 && i < SI.length - 1) {
    v /= 1000
    i++
  }
  if (i === 0) return `${Math.round(v)} bit/s`
  return `${sig3(v)} ${SI[i]}bit/s`
}

/** formatBytes(1536) === "1.50 KiB". */
export function formatBytes(bytes: number | null | undefined): string {
  let v = finite(bytes)
  let i = 0
  while (Math.abs(v) >= 1024 && i < BIN.length - 1) {
    v /= 1024
    i++
  }
  if (i === 0) return `${Math.round(v)} B`
  return `${sig3(v)} ${BIN[i]}`
}

const grouped = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 })

/** formatCount(1234567) === "1,234,567". */
export function formatCount(n: number | null | undefined): string {
  return grouped.format(finite(n))
}

/** Packets per second, grouped: "12,345 pps". */
export function formatPps(n: number | null | undefined): string {
  return `${formatCount(n)} pps`
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n)
}

/** Local absolute time "2026-01-02 15:04:05" of a Unix-seconds timestamp. */
export function formatAbsolute(ts: number | null | undefined): string {
  const t = finite(ts)
  if (t <= 0) return 'never'
  const d = new Date(t * 1000)
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  )
}

/** Relative time "5 min ago" / "in 2 h" of a Unix-seconds timestamp. */
export function formatRelative(ts: number | null | undefined, nowMs: number = Date.now()): string {
  const t = finite(ts)
  if (t <= 0) return 'never'
  const diff = Math.round(nowMs / 1000 - t)
  const abs = Math.abs(diff)
  if (abs < 5) return 'just now'
  let text: string
  if (abs < 60) text = `${abs} s`
  else if (abs < 3600) text = `${Math.floor(abs / 60)} min`
  else if (abs < 86400) text = `${Math.floor(abs / 3600)} h`
  else text = `${Math.floor(abs / 86400)} d`
  return diff >= 0 ? `${text} ago` : `in ${text}`
}

/** Duration "1 h 05 min", "42 s". */
export function formatDuration(seconds: number | null | undefined): string {
  const s = Math.max(0, Math.round(finite(seconds)))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`
  if (s < 86400) return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`
}

/** Percent with one decimal. */
export function formatPercent(part: number, whole: number): string {
  if (!whole) return '0%'
  return `${((100 * part) / whole).toFixed(1)}%`
}

// Characters that change how surrounding text is shown (bidirectional
// overrides and isolates, zero-width marks) or are invisible controls.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g

export interface TextPart {
  text: string
  /** true for a visible stand-in of an invisible or reordering character */
  control: boolean
}

/**
 * Splits untrusted text so invisible and bidi-control characters can be
 * shown as visible markers ("U+202E") instead of silently reordering the
 * text around them. Everything else is kept as it was sent.
 */
export function visibleParts(s: string | null | undefined): TextPart[] {
  const str = s ?? ''
  const parts: TextPart[] = []
  let last = 0
  for (const m of str.matchAll(INVISIBLE)) {
    const i = m.index ?? 0
    if (i > last) parts.push({ text: str.slice(last, i), control: false })
    const cp = m[0].codePointAt(0) ?? 0
    parts.push({ text: `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`, control: true })
    last = i + m[0].length
  }
  if (last < str.length) parts.push({ text: str.slice(last), control: false })
  return parts
}

/** The text with invisible characters replaced by "[U+XXXX]" markers. */
export function visibleText(s: string | null | undefined): string {
  return visibleParts(s)
    .map((p) => (p.control ? `[${p.text}]` : p.text))
    .join('')
}

/** Transport protocol number to name (flow rows carry the number). */
export function protoName(p: number): string {
  switch (p) {
    case 1:
      return 'ICMP'
    case 6:
      return 'TCP'
    case 17:
      return 'UDP'
    case 47:
      return 'GRE'
    case 50:
      return 'ESP'
    case 58:
      return 'ICMPv6'
    case 132:
      return 'SCTP'
    default:
      return String(p)
  }
}

/** "10.0.0.1:443", "[2001:db8::1]:443"; the address alone for port 0. */
export function hostPort(addr: string, port: number): string {
  if (!port) return addr
  return addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}`
}

/** Syslog severity names (RFC 5424 numbering). */
export const SEVERITIES = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'] as const

export function severityName(n: number): string {
  return SEVERITIES[n] ?? String(n)
}
