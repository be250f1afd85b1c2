package capture

import "net/netip"

// direction of a packet relative to the capturing host.
type direction uint8

const (
	dirLocal direction = iota
	dirIn
	dirOut
)

func (d direction) String() string {
	switch d {
	case dirIn:
		return "in"
	case dirOut:
		return "out"
	}
	return "local"
}

// isOwn reports whether a is one of the interface's own addresses.
func (e *Engine) isOwn(a netip.Addr) bool {
	for _, o := range e.own {
		if o == a {
			return true
		}
	}
	return false
}

// isLocal reports whether a stays on the local side: one of the
// interface's networks (LocalNets) or a local-scope address.
func (e *Engine) isLocal(a netip.Addr) bool {
	if localScope(a) {
		return true
	}
	for _, n := range e.nets {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

// localScope reports whether a is an address that does not cross the
// Internet: private (RFC 1918, IPv6 ULA fc00::/7), loopback, link-local
// (unicast and multicast), any multicast, the limited broadcast
// 255.255.255.255 and the unspecified address (DHCP, DAD). Multicast and
// broadcast are included because they are LAN chatter (mDNS, SSDP, ARP-like
// discovery), not traffic with a remote party. Other reserved IPv4
// addresses (240.0.0.0/4) are not local.
func localScope(a netip.Addr) bool {
	// Byte tests first: this runs twice per packet, and most remote
	// addresses fail every one of them.
	if a.Is4() {
		b := a.As4()
		switch {
		case b[0] == 10, b[0] == 127, b[0] >= 224, // private, loopback, multicast and reserved
			b[0] == 0 && b == [4]byte{}, // unspecified
			b[0] == 172 && b[1]&0xf0 == 16,
			b[0] == 192 && b[1] == 168,
			b[0] == 169 && b[1] == 254:
			return b[0] < 240 || b == [4]byte{255, 255, 255, 255}
		}
		return false
	}
	b := a.As16()
	switch {
	case b[0]&0xfe == 0xfc, b[0] == 0xff, b[0] == 0xfe && b[1]&0xc0 == 0x80:
		return true
	case b[0] == 0:
		return a.IsLoopback() || a.IsUnspecified()
	}
	return false
}

// classify decides the direction of an IP packet and which end is the
// endpoint to account it to (the zero Addr if there is none). The rules, in
// order:
//
//  1. Both ends local (own networks or local scope): local. The endpoint
//     is the end that is not own; if neither is own (LAN traffic seen in
//     promiscuous mode), the source. If both are own, there is none.
//  2. The source is own: out, to the destination.
//  3. The destination is own: in, from the source.
//  4. Neither is own (a router, a mirror port): the local end decides; a
//     local source is out to the destination, a local destination is in
//     from the source.
//  5. Neither end is local (transit between two remote addresses): in,
//     from the source.
//
// For in and out the endpoint is never local.
func (e *Engine) classify(src, dst netip.Addr) (direction, netip.Addr) {
	srcOwn, dstOwn := e.isOwn(src), e.isOwn(dst)
	srcLocal := srcOwn || e.isLocal(src)
	dstLocal := dstOwn || e.isLocal(dst)
	switch {
	case srcLocal && dstLocal:
		switch {
		case srcOwn && dstOwn:
			return dirLocal, netip.Addr{}
		case srcOwn:
			return dirLocal, dst
		}
		return dirLocal, src
	case srcOwn:
		return dirOut, dst
	case dstOwn:
		return dirIn, src
	case srcLocal:
		return dirOut, dst
	}
	return dirIn, src
}

// addrKey is an address as a map key: 16 bytes hash faster than a
// netip.Addr (which also carries a zone pointer). IPv4 addresses are
// stored IPv4-mapped; keyOf's callers have already unmapped IPv6-mapped
// IPv4, so the two never collide.
type addrKey [16]byte

func keyOf(a netip.Addr) addrKey { return a.As16() }

func (k addrKey) addr() netip.Addr { return netip.AddrFrom16(k).Unmap() }
