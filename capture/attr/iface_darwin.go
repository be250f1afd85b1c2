package attr

import "strings"

// darwinVirtual are the name prefixes of macOS's virtual interfaces:
// tunnels and VPN (utun, ipsec, gif, stf), bridges and Apple's peer links
// (bridge, awdl, llw, ap, anpi), and hypervisor adapters (vmenet, feth).
// Physical Ethernet and Wi-Fi are en*.
var darwinVirtual = []string{"utun", "ipsec", "gif", "stf", "bridge", "awdl", "llw", "ap", "anpi", "vmenet", "feth", "lo"}

// isVirtual reports whether a macOS interface is virtual, by its name
// (macOS has no /sys to ask).
func isVirtual(name string) bool {
	for _, p := range darwinVirtual {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
