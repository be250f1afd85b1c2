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

// IsGlobal reports whether addr is a globally routed unicast address:
// the only kind that is looked up, queued or dialled. IPv4-mapped IPv6
// addresses are judged as their IPv4 address.
func IsGlobal(addr netip.Addr) bool {
	addr = addr.Unmap()
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
	addr = addr.Unmap()
	for _, m := range metadataAddrs {
		if addr == m {
			return true
		}
	}
	return false
}
