// Small helpers over agent list items (spec 2.9).
import type { Agent } from '../api/types'

/**
 * The loopback interface, named as the hub recognises it (app/fleet
 * isLoopback): lo on Linux, lo0 on macOS/BSD, "Loopback Pseudo-Interface 1"
 * on Windows. Its traffic is the host talking to itself: the hub counts it
 * as "local" in the history, not as in or out.
 */
export function isLoopback(name: string): boolean {
  return name === 'lo' || /^lo\d+$/.test(name) || name.toLowerCase().includes('loopback')
}

/** Receive rate of the network interfaces (loopback left out), bits per second (rates[].rx_bps). */
export function agentRx(a: Agent): number {
  return (a.rates ?? []).reduce((s, r) => s + (isLoopback(r.name) ? 0 : r.rx_bps || 0), 0)
}

/** Send rate of the network interfaces (loopback left out), bits per second (rates[].tx_bps). */
export function agentTx(a: Agent): number {
  return (a.rates ?? []).reduce((s, r) => s + (isLoopback(r.name) ? 0 : r.tx_bps || 0), 0)
}

/** "pcap on eth0", "ebpf", "off". */
export function attrLabel(a: Agent): string {
  const m = a.attr_method || 'off'
  return m === 'pcap' && a.attr_iface ? `pcap on ${a.attr_iface}` : m
}
