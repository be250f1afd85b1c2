// Device interface status as spec 3 colours it.

export type IfaceStatus = 'down' | 'critical' | 'warning' | 'normal'

/**
 * Spec 3 utilisation status: down wins (not oper-up), then the higher of
 * in/out: >=90 % critical, >=70 % warning, else normal; null utilisation
 * (speed unknown) is normal.
 */
export function ifaceStatus(f: { oper_up: boolean; rx_util_pct?: number | null; tx_util_pct?: number | null }): IfaceStatus {
  if (!f.oper_up) return 'down'
  const u = Math.max(f.rx_util_pct ?? 0, f.tx_util_pct ?? 0)
  if (u >= 90) return 'critical'
  if (u >= 70) return 'warning'
  return 'normal'
}
