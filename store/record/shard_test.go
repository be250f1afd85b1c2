package record

import (
	"net/netip"
	"testing"
)

func TestShard(t *testing.T) {
	tests := []struct {
		desc string
		addr string
		n    int
	}{
		{"IPv4 over 4", "192.0.2.1", 4},
		{"IPv6 over 7", "2001:db8::1", 7},
		{"one worker", "198.51.100.9", 1},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		got := Shard(a, tt.n)
		if got < 0 || got >= tt.n {
			t.Errorf("%s: Shard = %d, want 0..%d", tt.desc, got, tt.n-1)
		}
		if again := Shard(a, tt.n); again != got {
			t.Errorf("%s: Shard is not stable: %d then %d", tt.desc, got, again)
		}
	}
	// Senders spread: 256 addresses over 4 workers leave none idle.
	seen := map[int]int{}
	for i := range 256 {
		seen[Shard(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), 4)]++
	}
	if len(seen) != 4 {
		t.Errorf("256 senders used %d of 4 workers: %v", len(seen), seen)
	}
}
