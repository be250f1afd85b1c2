package snmp

import "strings"

// Class maps an IANAifType (and, for the types that say little, the
// interface name) to the interface class of spec 2.11.
func Class(ifType int, name string) string {
	n := strings.ToLower(name)
	vpnName := strings.HasPrefix(n, "wg") || strings.HasPrefix(n, "ipsec") || strings.HasPrefix(n, "vti") ||
		strings.HasPrefix(n, "ssl.") || strings.HasPrefix(n, "ovpn") || strings.HasPrefix(n, "tun")
	switch ifType {
	case 6, 7, 26, 62, 69, 117, 161: // ethernetCsmacd, iso88023, ethernet3Mbit, fastEther(FX), gigabitEthernet, ieee8023adLag
		return "ethernet"
	case 71, 252: // ieee80211, capwapWtpVirtualRadio
		return "wifi"
	case 24: // softwareLoopback
		return "loopback"
	case 131, 150, 166: // tunnel, mplsTunnel, mpls
		if vpnName {
			return "vpn"
		}
		return "tunnel"
	case 209: // bridge
		return "bridge"
	case 135, 136, 137: // l2vlan, l3ipvlan, l3ipxvlan
		return "vlan"
	case 23, 108: // ppp, pppMultilinkBundle
		return "ppp"
	case 53, 1: // propVirtual, other: the name is all there is
		switch {
		case vpnName:
			return "vpn"
		case strings.HasPrefix(n, "br") || strings.HasPrefix(n, "bridge"):
			return "bridge"
		case strings.HasPrefix(n, "vlan") || strings.Contains(n, "."):
			return "vlan"
		case strings.HasPrefix(n, "gre") || strings.HasPrefix(n, "ipip") || strings.HasPrefix(n, "sit"):
			return "tunnel"
		}
	}
	return "unknown"
}
