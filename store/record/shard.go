package record

import "net/netip"

// Shard spreads senders over n workers by an FNV-1a hash of the address.
// It is the one spreading of the ingest path: a collector's socket
// workers (a NetFlow data set never overtakes its template, a host's
// syslog lines stay in order) and the queue's flow writers (an exporter's
// sums go through one writer) both use it, so a sender keeps to one
// worker at each stage.
func Shard(a netip.Addr, n int) int {
	b := a.As16()
	var h uint32 = 2166136261
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619
	}
	return int(h % uint32(n))
}
