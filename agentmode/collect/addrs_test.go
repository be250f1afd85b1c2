package collect

import (
	"context"
	"net"
	"net/netip"
	"testing"
)

// TestInterfaceAddrs: the addresses sent are this host's own, in CIDR,
// loopback and link-local left out; the counters carry them by name.
func TestInterfaceAddrs(t *testing.T) {
	got := interfaceAddrs(context.Background())
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, f := range ifs {
		addrs, _ := f.Addrs()
		for _, a := range addrs {
			p, err := netip.ParsePrefix(a.String())
			if err != nil || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast() {
				continue
			}
			want[f.Name] = append(want[f.Name], p.String())
		}
	}
	if len(got) != len(want) {
		t.Fatalf("addresses %v, want %v", got, want)
	}
	for name, w := range want {
		if g := got[name]; len(g) != len(w) || g[0] != w[0] {
			t.Errorf("%s: %v, want %v", name, g, w)
		}
	}
	if got["lo"] != nil {
		t.Errorf("loopback sent: %v", got["lo"])
	}
	counters, err := ioCounters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counters {
		if len(want[c.Name]) > 0 && (len(c.Addrs) == 0 || c.Addrs[0] != want[c.Name][0]) {
			t.Errorf("counters of %s carry %v, want %v", c.Name, c.Addrs, want[c.Name])
		}
	}
}
