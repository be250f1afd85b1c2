package collect

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// sysClassNet is where Linux publishes each interface's attributes (a
// variable so a test can point it at a made tree).
var sysClassNet = "/sys/class/net"

// linkSpeed is the interface's link speed in Mbit/s from
// /sys/class/net/<if>/speed, 0 when unknown: the file is missing
// (loopback, tun), unreadable (a link that is down answers EINVAL), or
// holds -1 (the driver does not know) or junk.
func linkSpeed(name string) int64 {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return 0
	}
	raw, err := os.ReadFile(filepath.Join(sysClassNet, name, "speed"))
	if err != nil {
		return 0
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || v <= 0 {
		return 0
	}
	return v
}
