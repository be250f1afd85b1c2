// Addresses as the host page and its links need them.

const V4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/

/** Whether s is an IPv4 or IPv6 address (no port, no zone). */
export function isIP(s: string): boolean {
  if (V4.test(s)) return true
  if (!s.includes(':') || s.length > 45 || !/^[0-9a-fA-F:.]+$/.test(s)) return false
  try {
    new URL(`http://[${s}]/`)
    return true
  } catch {
    return false
  }
}

/**
 * The address part of "ip:port", "[v6]:port" or a bare address: how
 * agents and the hub's socket list write their endpoints.
 */
export function hostOf(addr: string): string {
  if (!addr) return ''
  if (addr.startsWith('[')) {
    const end = addr.indexOf(']')
    return end > 0 ? addr.slice(1, end) : addr
  }
  if (isIP(addr)) return addr
  const i = addr.lastIndexOf(':')
  return i > 0 ? addr.slice(0, i) : addr
}
