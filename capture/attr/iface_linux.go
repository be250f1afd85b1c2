package attr

import (
	"os"
	"path/filepath"
)

// isVirtual reports whether a Linux interface is virtual (veth, bridge,
// tun/tap, WireGuard, docker, VPN ...): physical devices, and only they,
// have a /sys/class/net/<name>/device link to their bus device.
func isVirtual(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name, "device"))
	return err != nil
}
