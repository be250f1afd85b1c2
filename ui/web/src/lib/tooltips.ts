// ECharts tooltip formatters. Each returns HTML (ECharts sets it as the
// tooltip's innerHTML), so every value from the hub is escaped here, and
// no style attribute is written (the hub's CSP blocks inline styles):
// markers are coloured by CSS classes (.dot-N).
import { escapeHtml } from './escape'
import { formatAbsolute, visibleText } from './format'

export interface AxisParam {
  seriesName?: string
  seriesIndex?: number
  value?: unknown
  axisValue?: unknown
  axisValueLabel?: string
  name?: string
  data?: unknown
}

function row(index: number, name: string, value: string): string {
  return (
    `<div class="tt-row"><span class="tt-dot dot-${index % 6}"></span>` +
    `<span class="tt-name">${escapeHtml(visibleText(name))}</span>` +
    `<span class="tt-val">${escapeHtml(value)}</span></div>`
  )
}

function num(v: unknown): number {
  if (Array.isArray(v)) return Number(v[v.length - 1])
  return Number(v)
}

/** Axis-trigger tooltip of a time series: title = time, one row per series. */
export function timeSeriesTooltip(fmt: (v: number) => string) {
  return (params: AxisParam | AxisParam[]): string => {
    const ps = Array.isArray(params) ? params : [params]
    if (!ps.length) return ''
    const first = ps[0]
    const x = Array.isArray(first.value) ? Number(first.value[0]) : Number(first.axisValue)
    const title = Number.isFinite(x) && x > 1e9 ? formatAbsolute(x > 1e11 ? x / 1000 : x) : String(first.axisValueLabel ?? first.axisValue ?? '')
    return `<div class="tt-title">${escapeHtml(title)}</div>` + ps.map((p) => row(p.seriesIndex ?? 0, String(p.seriesName ?? ''), fmt(num(p.value)))).join('')
  }
}

/** Axis-trigger tooltip of a category axis (hours, days, names). */
export function categoryTooltip(fmt: (v: number) => string, titleFmt: (c: string) => string = (c) => c) {
  return (params: AxisParam | AxisParam[]): string => {
    const ps = Array.isArray(params) ? params : [params]
    if (!ps.length) return ''
    const title = titleFmt(String(ps[0].axisValueLabel ?? ps[0].axisValue ?? ps[0].name ?? ''))
    return `<div class="tt-title">${escapeHtml(visibleText(title))}</div>` + ps.map((p) => row(p.seriesIndex ?? 0, String(p.seriesName ?? ''), fmt(num(p.value)))).join('')
  }
}

/** Item tooltip of a pie slice: name, value and share. */
export function pieTooltip(fmt: (v: number) => string) {
  return (p: AxisParam & { percent?: number; dataIndex?: number }): string =>
    `<div class="tt-title">${escapeHtml(visibleText(String(p.name ?? '')))}</div>` +
    row(p.dataIndex ?? 0, fmt(num(p.value)), `${(p.percent ?? 0).toFixed(1)}%`)
}

export interface EndpointDatum {
  value: number
  ip: string
  hostname: string
  country: string
  asn: string
  local: boolean
}

/** Item tooltip of a top-endpoint bar: the hostname, address and origin. */
export function endpointTooltip(fmt: (v: number) => string) {
  return (p: AxisParam | AxisParam[]): string => {
    const item = Array.isArray(p) ? p[0] : p
    const d = (item?.data ?? {}) as Partial<EndpointDatum>
    const where = [d.country, d.asn, d.local ? 'local' : ''].filter(Boolean).join(' · ')
    return (
      `<div class="tt-title">${escapeHtml(visibleText(d.hostname || d.ip || ''))}</div>` +
      (d.hostname ? `<div class="tt-sub">${escapeHtml(d.ip ?? '')}</div>` : '') +
      (where ? `<div class="tt-sub">${escapeHtml(where)}</div>` : '') +
      row(0, 'total', fmt(num(item?.value)))
    )
  }
}
