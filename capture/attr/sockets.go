package attr

import "net/netip"

// boundKey finds a listening TCP socket or an unconnected UDP socket by
// its local end (the address may be unspecified: bound to all).
type boundKey struct {
	proto uint8
	addr  netip.Addr
	port  uint16
}
