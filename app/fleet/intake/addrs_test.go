package intake

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"reflect"
	"testing"

	"netmon/agentmode/wire"
)

// TestCleanAddrs: interface addresses are kept canonical, invalid ones
// dropped, at most wire.MaxAddrs per interface; an interface without
// any keeps none (and its JSON omits the field, as an old agent's).
func TestCleanAddrs(t *testing.T) {
	many := make([]string, 0, 20)
	for i := range 20 {
		many = append(many, fmt.Sprintf("10.0.%d.1/24", i))
	}
	ifs := []wire.Interface{
		{Name: "eth0", Addrs: []string{"192.0.2.10/24", "not-an-address", "2001:DB8::1/64", "192.0.2.11"}},
		{Name: "eth1", Addrs: many},
		{Name: "eth2", Addrs: []string{"junk"}},
		{Name: "lo"},
	}
	cleanAddrs(ifs)
	if want := []string{"192.0.2.10/24", "2001:db8::1/64"}; !reflect.DeepEqual(ifs[0].Addrs, want) {
		t.Errorf("eth0 %v, want %v", ifs[0].Addrs, want)
	}
	if len(ifs[1].Addrs) != wire.MaxAddrs || ifs[1].Addrs[15] != "10.0.15.1/24" {
		t.Errorf("eth1 kept %d: %v", len(ifs[1].Addrs), ifs[1].Addrs)
	}
	if ifs[2].Addrs != nil || ifs[3].Addrs != nil {
		t.Errorf("eth2 %v lo %v", ifs[2].Addrs, ifs[3].Addrs)
	}
	b, _ := json.Marshal(ifs[2])
	if string(b) != `{"name":"eth2","rx_bytes":0,"tx_bytes":0,"rx_packets":0,"tx_packets":0}` {
		t.Errorf("json %s", b)
	}
}

// FuzzCleanAddrs: whatever an agent sends as addresses, the kept ones
// are at most MaxAddrs canonical prefixes.
func FuzzCleanAddrs(f *testing.F) {
	f.Add("192.0.2.10/24", "2001:db8::1/64", "junk")
	f.Add("", "::/0", "1.2.3.4/33")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		ifs := []wire.Interface{{Name: "x", Addrs: []string{a, b, c}}}
		cleanAddrs(ifs)
		if len(ifs[0].Addrs) > wire.MaxAddrs {
			t.Fatalf("kept %d", len(ifs[0].Addrs))
		}
		for _, s := range ifs[0].Addrs {
			p, err := netip.ParsePrefix(s)
			if err != nil || p.String() != s {
				t.Fatalf("kept %q", s)
			}
		}
	})
}

// TestSpeedMbps: a reported link speed is kept as is up to 1.6 Tbit/s;
// zero, negative (sysfs -1 passed through by another agent build) and
// absurd values are unknown (0), not a denominator that hides or invents
// utilisation.
func TestSpeedMbps(t *testing.T) {
	for in, want := range map[int64]int64{0: 0, -1: 0, 10: 10, 10000: 10000, 1_600_000: 1_600_000, 1_600_001: 0, 1 << 62: 0} {
		if got := speedMbps(in); got != want {
			t.Errorf("speedMbps(%d) = %d, want %d", in, got, want)
		}
	}
}
