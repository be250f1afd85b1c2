// Shared pieces of the process pages (spec 2.9 process, L7 and DNS items;
// 4.6 routes): the time ranges kept in the URL and the name of the row that
// holds the bytes the agents could not tie to a process.
export const UNATTRIBUTED = '(unattributed)'

export const RANGES = ['1h', '6h', '24h', '7d'] as const
export type Range = (typeof RANGES)[number]
export const MINUTES: Record<Range, number> = { '1h': 60, '6h': 360, '24h': 1440, '7d': 10080 }
export const rangeOptions = RANGES.map((r) => ({ value: r, label: r }))

/** The process detail path of the hub, the name escaped as one segment. */
export function processPath(agentId: number, name: string): string {
  return `/api/v1/agents/${agentId}/processes/${encodeURIComponent(name)}`
}

/** Reason rows summed by reason, most bytes first. */
export function sumReasons<T extends { reason: string; bytes: number; packets: number }>(lists: T[][]): { reason: string; bytes: number; packets: number }[] {
  const by = new Map<string, { reason: string; bytes: number; packets: number }>()
  for (const l of lists)
    for (const r of l) {
      const cur = by.get(r.reason) ?? { reason: r.reason, bytes: 0, packets: 0 }
      cur.bytes += r.bytes
      cur.packets += r.packets
      by.set(r.reason, cur)
    }
  return [...by.values()].sort((a, b) => b.bytes - a.bytes || a.reason.localeCompare(b.reason))
}
