package attr

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"netmon/agentmode/wire"
)

// macOS without cgo (noSockets): every byte goes to "(unattributed)"
// with the reason, and the SNI and the DNS name are still reported.
func TestNoSocketTable(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tab := newTable(DefaultConfig(), wire.ReasonNotLocal)
	tab.setLocal([]netip.Addr{netip.MustParseAddr("10.0.0.1")})
	hello := readFixture(t, "clienthello-go-pq.bin")
	feed(tab, now,
		frame(t, ip4("10.0.0.1", "93.184.216.34", layers.IPProtocolTCP), tcp(40000, 443, 1, false), hello),
		frame(t, ip4("93.184.216.34", "10.0.0.1", layers.IPProtocolTCP), tcp(443, 40000, 9, false), make([]byte, 5000)),
		frame(t, ip4("10.0.0.1", "10.0.0.53", layers.IPProtocolUDP), udp(5555, 53), dnsQuery("example.test", false)),
	)
	keys := tab.pendingKeys()
	match, err := noSockets{}.lookup(keys)
	if err != nil || len(keys) != 2 {
		t.Fatalf("%d keys, %v", len(keys), err)
	}
	tab.resolve(keys, match)
	if n := len(tab.pendingKeys()); n != 0 {
		t.Fatalf("%d flows still pending", n)
	}
	r := tab.report(now)
	q := uint64(len(dnsQuery("example.test", false)))
	want := []wire.ProcessTraffic{{Process: wire.UnattributedProcess, BytesIn: 5000, BytesOut: uint64(len(hello)) + q, PacketsIn: 1, PacketsOut: 2,
		Reasons: []wire.UnattributedReason{{Reason: "no socket table on macOS without cgo", Bytes: 5000 + uint64(len(hello)) + q, Packets: 3}}}}
	if !reflect.DeepEqual(r.Processes, want) {
		t.Fatalf("rows\n got %+v\nwant %+v", r.Processes, want)
	}
	wantL7 := []wire.L7Observation{{Host: "pq.example.test", Kind: wire.KindTLS, Process: wire.UnattributedProcess, Bytes: 5000 + uint64(len(hello)), Hits: 1}}
	wantDNS := []wire.DNSObservation{{Domain: "example.test", Process: wire.UnattributedProcess, Queries: 1}}
	if !reflect.DeepEqual(r.L7, wantL7) || !reflect.DeepEqual(r.DNS, wantDNS) {
		t.Fatalf("names: L7 %+v DNS %+v", r.L7, r.DNS)
	}
}
