package udpsock

import "net/netip"

// Shard spreads senders over n workers by an FNV-1a hash of the address:
// a sender always lands on the same worker, so its datagrams are handled
// in the order they arrived (a NetFlow data set never overtakes its
// template, a host's syslog lines stay in order).
func Shard(a netip.Addr, n int) int {
	b := a.As16()
	var h uint32 = 2166136261
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619
	}
	return int(h % uint32(n))
}
