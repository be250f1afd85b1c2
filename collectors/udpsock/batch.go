package udpsock

import "net/netip"

// Msg describes one datagram read by a BatchReader.
type Msg struct {
	N    int        // bytes in the buffer
	Addr netip.Addr // sender (IPv4-mapped addresses unmapped)
	// Truncated: the datagram was larger than its buffer.
	Truncated bool
}
