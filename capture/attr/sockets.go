package attr

import "net/netip"

// boundKey finds a listening TCP socket or an unconnected UDP socket by
// its local end (the address may be unspecified: bound to all).
type boundKey struct {
	proto uint8
	addr  netip.Addr
	port  uint16
}

// noSockets resolves every flow at once to reasonNoSocketTable, so no
// flow waits for lookups that cannot succeed.
type noSockets struct{}

func (noSockets) lookup([]flowKey) (func(flowKey) (owner, bool), error) {
	return func(flowKey) (owner, bool) { return owner{reason: reasonNoSocketTable}, true }, nil
}
