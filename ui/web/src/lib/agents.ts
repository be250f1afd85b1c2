// Small helpers over agent list items (spec 2.9).
import type { Agent } from '../api/types'

/** Receive rate of all interfaces, bits per second (rates[].rx_bps). */
export function agentRx(a: Agent): number {
  return (a.rates ?? []).reduce((s, r) => s + (r.rx_bps || 0), 0)
}

/** Send rate of all interfaces, bits per second (rates[].tx_bps). */
export function agentTx(a: Agent): number {
  return (a.rates ?? []).reduce((s, r) => s + (r.tx_bps || 0), 0)
}

/** "pcap on eth0", "ebpf", "off". */
export function attrLabel(a: Agent): string {
  const m = a.attr_method || 'off'
  return m === 'pcap' && a.attr_iface ? `pcap on ${a.attr_iface}` : m
}
