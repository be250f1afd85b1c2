package netguard

import "net/netip"

// nonGlobal lists the ranges that no GeoIP source can place and that
// are never sent to an online service, beyond what the netip predicates
// catch (loopback, private, link-local, multicast, unspecified).
var nonGlobal = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT shared space
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
}

// metadataAddrs are cloud instance metadata services: refused by the
// guarded client even when an operator names them (AWS/GCP/Azure,
// AWS over IPv6, Alibaba).
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

// Prefixes of IPv6 addresses that carry an IPv4 address a packet reaches
// in the end: NAT64's well-known prefix (RFC 6052: the last 32 bits, a
// NAT64 gateway on the path delivers to them), the deprecated
// IPv4-compatible form (::a.b.c.d) and 6to4 (RFC 3056: bits 16-47).
var (
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")
	v4Compatible   = netip.MustParsePrefix("::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
)

// embedded returns the IPv4 address an IPv6 address delivers to (mapped,
// NAT64, IPv4-compatible, 6to4), or addr itself. 64:ff9b::7f00:1 is
// 127.0.0.1 to whoever has a NAT64 gateway: judging it as IPv6 would let
// a hostile name reach loopback or a metadata service through it.
func embedded(addr netip.Addr) netip.Addr {
	addr = addr.Unmap()
	if !addr.Is6() {
		return addr
	}
	b := addr.As16()
	switch {
	case nat64WellKnown.Contains(addr):
		return netip.AddrFrom4([4]byte(b[12:16]))
	case v4Compatible.Contains(addr) && !addr.IsUnspecified() && !addr.IsLoopback():
		// ::/96 minus :: and ::1, which are IPv6's own.
		return netip.AddrFrom4([4]byte(b[12:16]))
	case sixToFour.Contains(addr):
		return netip.AddrFrom4([4]byte(b[2:6]))
	}
	return addr
}

// IsGlobal reports whether addr is a globally routed unicast address:
// the only kind that is looked up, queued or dialled. IPv6 addresses that
// carry an IPv4 address (mapped, NAT64 64:ff9b::/96, IPv4-compatible,
// 6to4) are judged as that IPv4 address.
func IsGlobal(addr netip.Addr) bool {
	addr = embedded(addr)
	if !addr.IsValid() || addr.Zone() != "" ||
		addr.IsUnspecified() || addr.IsLoopback() || addr.IsPrivate() ||
		addr.IsLinkLocalUnicast() || addr.IsMulticast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range nonGlobal {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// IsMetadata reports whether addr is a cloud instance metadata service.
func IsMetadata(addr netip.Addr) bool {
	addr = embedded(addr)
	for _, m := range metadataAddrs {
		if addr == m {
			return true
		}
	}
	return false
}
