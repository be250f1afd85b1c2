package attr

import (
	"net/netip"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"netmon/agentmode/wire"
)

// feed parses frames and adds them to the table, as the reader does.
func feed(tab *table, now time.Time, frames ...[]byte) {
	for _, f := range frames {
		p, ok := parseFrame(linkEthernet, f, len(f))
		tab.add(p, ok, len(f), now)
	}
}

// dnsQuery builds a DNS message (query or response) asking name A.
func dnsQuery(name string, response bool) []byte {
	m := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	if response {
		m[2] = 0x81
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i == len(name) || name[i] == '.' {
			m = append(m, byte(i-start))
			m = append(m, name[start:i]...)
			start = i + 1
		}
	}
	return append(m, 0, 0, 1, 0, 1)
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/l7/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTableReport(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tab := newTable(DefaultConfig(), wire.ReasonNotLocal)
	tab.setLocal([]netip.Addr{netip.MustParseAddr("10.0.0.1")})
	hello := readFixture(t, "clienthello-go-pq.bin")
	get := readFixture(t, "http-request-curl.bin")

	feed(tab, now,
		// curl, pid 42: a TLS connection whose ClientHello spans two
		// segments, and 5000 bytes back.
		frame(t, ip4("10.0.0.1", "93.184.216.34", layers.IPProtocolTCP), tcp(40000, 443, 1, true), nil),
		frame(t, ip4("10.0.0.1", "93.184.216.34", layers.IPProtocolTCP), tcp(40000, 443, 2, false), hello[:700]),
		frame(t, ip4("10.0.0.1", "93.184.216.34", layers.IPProtocolTCP), tcp(40000, 443, 702, false), hello[700:]),
		frame(t, ip4("93.184.216.34", "10.0.0.1", layers.IPProtocolTCP), tcp(443, 40000, 9, false), make([]byte, 5000)),
		// curl again: plain HTTP.
		frame(t, ip4("10.0.0.1", "93.184.216.35", layers.IPProtocolTCP), tcp(40001, 80, 1, false), get),
		// dig, pid 7: a query and its answer; a reverse lookup is not
		// reported but its bytes are.
		frame(t, ip4("10.0.0.1", "10.0.0.53", layers.IPProtocolUDP), udp(5555, 53), dnsQuery("Example.TEST", false)),
		frame(t, ip4("10.0.0.53", "10.0.0.1", layers.IPProtocolUDP), udp(53, 5555), dnsQuery("example.test", true)),
		frame(t, ip4("10.0.0.1", "10.0.0.53", layers.IPProtocolUDP), udp(5555, 53), dnsQuery("1.0.0.10.in-addr.arpa", false)),
		// A socket nobody owns any more, one never found, traffic of
		// other hosts and an ICMP packet.
		frame(t, ip4("10.0.0.1", "10.9.9.9", layers.IPProtocolTCP), tcp(40002, 22, 1, false), make([]byte, 100)),
		frame(t, ip4("10.0.0.1", "10.9.9.8", layers.IPProtocolTCP), tcp(40003, 22, 1, false), make([]byte, 10)),
		frame(t, ip4("10.7.7.7", "10.8.8.8", layers.IPProtocolUDP), udp(1, 2), make([]byte, 20)),
		frame(t, ip4("10.0.0.1", "10.8.8.8", layers.IPProtocolICMPv4), &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0)}, make([]byte, 56)),
	)
	owners := map[uint16]owner{
		40000: {pid: 42, name: "curl"}, 40001: {pid: 42, name: "curl"},
		5555: {pid: 7, name: "dig"}, 40002: {reason: wire.ReasonProcessGone},
	}
	match := func(k flowKey) (owner, bool) { o, ok := owners[k.local.Port()]; return o, ok }
	for range lookupAttempts {
		tab.resolve(tab.pendingKeys(), match)
	}
	got := tab.report(now)

	want := Report{
		Processes: []wire.ProcessTraffic{
			{Process: "curl", PID: 42, BytesIn: 5000, BytesOut: uint64(len(hello) + len(get)), PacketsIn: 1, PacketsOut: 4, Remotes: []wire.Remote{
				{Proto: "tcp", IP: "93.184.216.34", Port: 443, BytesIn: 5000, BytesOut: uint64(len(hello)), PacketsIn: 1, PacketsOut: 3},
				{Proto: "tcp", IP: "93.184.216.35", Port: 80, BytesOut: uint64(len(get)), PacketsOut: 1},
			}},
			{Process: wire.UnattributedProcess, BytesIn: 20, BytesOut: 110 + 84, PacketsIn: 1, PacketsOut: 3, Reasons: []wire.UnattributedReason{
				{Reason: wire.ReasonProcessGone, Bytes: 100, Packets: 1},
				{Reason: wire.ReasonNotIP, Bytes: 84, Packets: 1},
				{Reason: wire.ReasonNotLocal, Bytes: 20, Packets: 1},
				{Reason: wire.ReasonNoSocket, Bytes: 10, Packets: 1},
			}},
			{Process: "dig", PID: 7, BytesIn: 30, BytesOut: 30 + 39, PacketsIn: 1, PacketsOut: 2, Remotes: []wire.Remote{
				{Proto: "udp", IP: "10.0.0.53", Port: 53, BytesIn: 30, BytesOut: 69, PacketsIn: 1, PacketsOut: 2},
			}},
		},
		L7: []wire.L7Observation{
			{Host: "pq.example.test", Kind: wire.KindTLS, Process: "curl", PID: 42, Bytes: uint64(len(hello)) + 5000, Hits: 1},
			{Host: "www.example.test", Kind: wire.KindHTTP, Process: "curl", PID: 42, Bytes: uint64(len(get)), Hits: 1},
		},
		DNS: []wire.DNSObservation{{Domain: "example.test", Process: "dig", PID: 7, Queries: 1, Responses: 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("report\n got %+v\nwant %+v", got, want)
	}

	// Deltas: the next report with no traffic is empty, and the flows
	// idle past FlowIdle are forgotten.
	if r := tab.report(now.Add(time.Second)); len(r.Processes)+len(r.L7)+len(r.DNS) != 0 {
		t.Fatalf("second report not empty: %+v", r)
	}
	tab.report(now.Add(DefaultConfig().FlowIdle + time.Second))
	if len(tab.flows) != 0 || tab.prefixes != 0 {
		t.Fatalf("%d flows, %d prefixes kept", len(tab.flows), tab.prefixes)
	}
}

// DNS over TCP: two framed queries in one segment, the answer in the
// next; a message cut by the segment's end is not read.
func TestTableDNSOverTCP(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tab := newTable(DefaultConfig(), wire.ReasonNotLocal)
	tab.setLocal([]netip.Addr{netip.MustParseAddr("10.0.0.1")})
	frameDNS := func(msgs ...[]byte) []byte {
		var out []byte
		for _, m := range msgs {
			out = append(out, byte(len(m)>>8), byte(len(m)))
			out = append(out, m...)
		}
		return out
	}
	q, a := dnsQuery("big.example.test", false), dnsQuery("big.example.test", true)
	cut := frameDNS(dnsQuery("cut.example.test", false))
	feed(tab, now,
		frame(t, ip4("10.0.0.1", "10.0.0.53", layers.IPProtocolTCP), tcp(41000, 53, 1, false), frameDNS(q, q)),
		frame(t, ip4("10.0.0.53", "10.0.0.1", layers.IPProtocolTCP), tcp(53, 41000, 1, false), frameDNS(a)),
		frame(t, ip4("10.0.0.1", "10.0.0.53", layers.IPProtocolTCP), tcp(41000, 53, 100, false), cut[:len(cut)-3]),
	)
	tab.resolve(tab.pendingKeys(), func(flowKey) (owner, bool) { return owner{pid: 9, name: "unbound"}, true })
	got := tab.report(now)
	want := []wire.DNSObservation{{Domain: "big.example.test", Process: "unbound", PID: 9, Queries: 2, Responses: 1}}
	if !reflect.DeepEqual(got.DNS, want) || len(got.L7) != 0 {
		t.Fatalf("dns %+v l7 %+v, want %+v", got.DNS, got.L7, want)
	}
}

func TestTableLoopbackCountsBothEnds(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tab := newTable(DefaultConfig(), wire.ReasonNotLocal)
	feed(tab, now, frame(t, ip4("127.0.0.1", "127.0.0.1", layers.IPProtocolTCP), tcp(50000, 8080, 1, false), make([]byte, 300)))
	tab.resolve(tab.pendingKeys(), func(k flowKey) (owner, bool) {
		if k.local.Port() == 8080 {
			return owner{pid: 2, name: "server"}, true
		}
		return owner{pid: 1, name: "client"}, true
	})
	r := tab.report(now)
	if len(r.Processes) != 2 || r.Processes[0].BytesOut+r.Processes[1].BytesOut != 300 || r.Processes[0].BytesIn+r.Processes[1].BytesIn != 300 {
		t.Fatalf("%+v", r.Processes)
	}
}

func TestTableBounds(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	cfg := DefaultConfig()
	cfg.MaxFlows = 2
	tab := newTable(cfg, wire.ReasonNotLocal)
	for port := uint16(1); port <= 3; port++ {
		feed(tab, now, frame(t, ip4("127.0.0.1", "10.0.0.2", layers.IPProtocolTCP), tcp(port, 443, 1, false), []byte{22, 3, 1, 1, 0}))
	}
	if len(tab.flows) != 2 || tab.unattr[wire.ReasonTableFull] == nil || tab.prefixes != 2 {
		t.Fatalf("flows %d, unattr %v, prefixes %d", len(tab.flows), tab.unattr, tab.prefixes)
	}
	r := tab.report(now)
	if u := r.Processes[0]; u.Process != wire.UnattributedProcess || u.BytesOut != 15 || len(u.Reasons) != 2 || u.Reasons[0].Reason != wire.ReasonLookupLimited {
		t.Fatalf("%+v", r.Processes)
	}
}

func TestChooseInterface(t *testing.T) {
	virtual := func(n string) bool { return n == "veth0" || n == "wg0" || n == "docker0" }
	for _, tc := range []struct {
		desc          string
		before, after []ifaceStat
		want          string
	}{
		{"one physical", []ifaceStat{{Name: "lo", Up: true, Loopback: true}, {Name: "eth0", Up: true}, {Name: "wg0", Up: true, Bytes: 1 << 40}}, nil, "eth0"},
		{"busiest physical in the window, not since boot",
			[]ifaceStat{{Name: "eth0", Up: true, Bytes: 1 << 40}, {Name: "eth1", Up: true, Bytes: 10}},
			[]ifaceStat{{Name: "eth0", Up: true, Bytes: 1<<40 + 5}, {Name: "eth1", Up: true, Bytes: 1000}}, "eth1"},
		{"down physical skipped", []ifaceStat{{Name: "eth0"}, {Name: "veth0", Up: true}}, nil, "veth0"},
		{"virtual only when nothing else", []ifaceStat{{Name: "lo", Up: true, Loopback: true}, {Name: "wg0", Up: true}}, nil, "wg0"},
		{"loopback last of all", []ifaceStat{{Name: "lo", Up: true, Loopback: true}}, nil, "lo"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			calls := 0
			list := func() ([]ifaceStat, error) {
				calls++
				if calls > 1 {
					return tc.after, nil
				}
				return tc.before, nil
			}
			slept := time.Duration(0)
			got, err := chooseInterface(list, virtual, time.Second, func(d time.Duration) { slept += d })
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if (tc.after != nil) != (slept == time.Second) {
				t.Fatalf("slept %v", slept)
			}
		})
	}
	if _, err := chooseInterface(func() ([]ifaceStat, error) { return nil, nil }, virtual, 0, func(time.Duration) {}); err == nil {
		t.Fatal("no interface: no error")
	}
}
