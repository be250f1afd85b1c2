package attr

import (
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"netmon/agentmode/wire"
)

// The per-frame work of the pcap backend: parse the headers and count the
// frame in its flow. For a flow already in the table it must not
// allocate.

func BenchmarkFrame(b *testing.B) {
	tab := newTable(DefaultConfig(), wire.ReasonNotLocal)
	tab.setLocal([]netip.Addr{netip.MustParseAddr("10.0.0.1")})
	f := frame(b, ip4("10.0.0.2", "10.0.0.1", layers.IPProtocolTCP), tcp(443, 40000, 1, false), make([]byte, 1448))[:600]
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		p, ok := parseFrame(linkEthernet, f, 1514)
		tab.add(p, ok, 1514, now)
	}
}

func TestFrameDoesNotAllocate(t *testing.T) {
	tab := newTable(DefaultConfig(), wire.ReasonNotLocal)
	tab.setLocal([]netip.Addr{netip.MustParseAddr("10.0.0.1")})
	in := frame(t, ip4("10.0.0.2", "10.0.0.1", layers.IPProtocolTCP), tcp(443, 40000, 1, false), make([]byte, 1448))
	dns := frame(t, ip4("10.0.0.53", "10.0.0.1", layers.IPProtocolUDP), udp(53, 5555), dnsQuery("example.test", true))
	now := time.Now()
	for _, f := range [][]byte{in, dns} { // create the flows and the name
		p, ok := parseFrame(linkEthernet, f, len(f))
		tab.add(p, ok, len(f), now)
	}
	if n := testing.AllocsPerRun(200, func() {
		for _, f := range [][]byte{in, dns} {
			p, ok := parseFrame(linkEthernet, f, len(f))
			tab.add(p, ok, len(f), now)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per frame pair", n)
	}
}
