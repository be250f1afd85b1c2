// Helpers of the Reports page (issue 31): the report query, the field an
// API error names, an SLA target's status, the sites the caller can pick
// and the file name of a download. Pure functions, tested in
// tests/reports.test.ts.
import type { ReportFormat, ReportType, SLATarget, SLATargetStatus } from '../api/types'

/** The report types a caller may generate: traffic and enterprise need
 * analyze, compliance only view (the hub's x-netmon-permission-when). */
export function reportTypes(canAnalyze: boolean): ReportType[] {
  return canAnalyze ? ['traffic', 'enterprise', 'compliance'] : ['compliance']
}

/** The range a type shows by default (the hub's defaults, spec 8). */
export function defaultDays(t: ReportType): number {
  return t === 'traffic' ? 7 : 30
}

export interface ReportParams {
  type: ReportType
  days: number
  format: ReportFormat
  site: string
}

/** The query of GET /api/report; an empty site is left out (every site). */
export function reportQuery(p: ReportParams): Record<string, string | number> {
  const q: Record<string, string | number> = { type: p.type, days: p.days, format: p.format }
  if (p.site) q.site = p.site
  return q
}

/**
 * The field an API error names, when it is one of fields: the hub's 400s
 * say "spec: …" (errs.InvalidField) or `query parameter "days": …`. null
 * when the message names none of them (shown above the form instead).
 */
export function errorField(message: string, fields: readonly string[]): string | null {
  const lead = /^([a-z_][a-z0-9_.]*)\s*:/i.exec(message)
  if (lead && fields.includes(lead[1])) return lead[1]
  const quoted = /(?:parameter|field)\s+"([a-z_][a-z0-9_.]*)"/i.exec(message)
  if (quoted && fields.includes(quoted[1])) return quoted[1]
  return null
}

/** The start of a SHA-256 for a table cell: "3f2a9c1b0d4e…". */
export function shortSha(sha: string, n = 12): string {
  return sha.length > n ? `${sha.slice(0, n)}…` : sha
}

export type SLAState = 'met' | 'breached' | 'no data'

/** What a target's current measurement says: no data is never a breach. */
export function slaState(s: SLATargetStatus): SLAState {
  if (s.no_data) return 'no data'
  return s.met ? 'met' : 'breached'
}

/** The pill class of a state: green met, red breached, grey no data. */
export function slaPill(state: SLAState): string {
  return state === 'met' ? 'pill-ok' : state === 'breached' ? 'pill-bad' : 'pill-muted'
}

/** The SLA metrics (the hub's reports.Metric* constants; the document
 * declares the field as a string) with what the threshold means. */
export const SLA_METRICS = [
  { value: 'agent_uptime', label: 'Agent uptime', atLeast: true },
  { value: 'device_availability', label: 'Device availability', atLeast: true },
  { value: 'iface_util_p95', label: 'Interface utilisation p95', atLeast: false },
  { value: 'packet_drop', label: 'Packet drop rate', atLeast: false },
] as const

/** "Agent uptime ≥ 99.5%" */
export function slaGoal(t: Pick<SLATarget, 'metric' | 'threshold'>): string {
  const m = SLA_METRICS.find((x) => x.value === t.metric)
  const label = m?.label ?? t.metric
  const op = m ? (m.atLeast ? '≥' : '≤') : ''
  return `${label} ${op} ${t.threshold}%`.replace(/\s+/g, ' ')
}

/** "site HQ", "every site", "agent 3 (web-01)", "device 2 (core-sw)". */
export function slaScope(t: SLATarget, agentName: (id: number) => string = () => '', deviceName: (id: number) => string = () => ''): string {
  if (t.scope === 'agent') {
    const n = agentName(t.agent_id ?? 0)
    return n ? `agent ${t.agent_id} (${n})` : `agent ${t.agent_id}`
  }
  if (t.scope === 'device') {
    const n = deviceName(t.device_id ?? 0)
    return n ? `device ${t.device_id} (${n})` : `device ${t.device_id}`
  }
  return t.site ? `site ${t.site}` : 'every site'
}

/** The sites named by agents and devices, sorted, without duplicates or "". */
export function knownSites(...lists: { site: string }[][]): string[] {
  const s = new Set<string>()
  for (const l of lists) for (const x of l) if (x.site) s.add(x.site)
  return [...s].sort((a, b) => a.localeCompare(b))
}

/** The file name of a Content-Disposition header (filename*= or filename=). */
export function dispositionFilename(header: string | null, fallback: string): string {
  if (!header) return fallback
  const star = /filename\*\s*=\s*(?:UTF-8'[^']*')?([^;]+)/i.exec(header)
  if (star) {
    try {
      return decodeURIComponent(star[1].trim().replace(/^"|"$/g, ''))
    } catch {
      /* a malformed escape: try the plain parameter */
    }
  }
  const plain = /filename\s*=\s*("([^"]*)"|[^;]+)/i.exec(header)
  if (plain) return (plain[2] ?? plain[1]).trim()
  return fallback
}

/** "a@example.com, b@example.com", or "archive only" when nobody gets it. */
export function recipientsText(r: string[] | null | undefined): string {
  const n = r?.length ?? 0
  if (!n) return 'archive only'
  return r!.join(', ')
}

/** Splits a recipients field: commas, semicolons, spaces or new lines. */
export function parseRecipients(s: string): string[] {
  return s
    .split(/[\s,;]+/)
    .map((x) => x.trim())
    .filter(Boolean)
}
