package capture

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// historySum adds up a snapshot's history.
func historySum(s Snapshot) (in, out, local, packets int64) {
	for _, b := range s.History {
		in += b.In
		out += b.Out
		local += b.Local
		packets += b.Packets
	}
	return
}

// TestReplayFixtures checks numbers worked out by hand from the
// generators and confirmed with tshark (testdata/pcap/README.md), so the
// goldens are not the only oracle.
func TestReplayFixtures(t *testing.T) {
	tests := []struct {
		file              string
		packets, bytes    int64
		in, out, local    int64
		protocols         map[string]int64
		decodeErr, dnsErr int64
	}{
		{"mixed.pcap", 41, 18017, 13272, 3668, 1077, map[string]int64{"TCP": 28, "UDP": 5, "ICMP": 2, "ICMPv6": 2, "ARP": 2, "Other": 2}, 0, 0},
		{"dns.pcap", 33, 6324, 3956, 1598, 770, map[string]int64{"TCP": 11, "UDP": 22}, 0, 0},
		{"vlan.pcap", 10, 2100, 1474, 566, 60, map[string]int64{"TCP": 7, "UDP": 2, "ARP": 1}, 0, 0},
		{"sll2.pcapng", 4, 2320, 1940, 380, 0, map[string]int64{"TCP": 4}, 0, 0},
		// bytes count the wire length: the frame cut to 44 bytes counts 154
		{"corrupt.pcap", 17, 1816, 88, 1564, 164, map[string]int64{"TCP": 8, "UDP": 5, "Other": 4}, 4, 2},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			e, n := replayFile(t, tc.file)
			s := e.Snapshot()
			if n != tc.packets || s.TotalPackets != tc.packets || s.TotalBytes != tc.bytes {
				t.Errorf("replayed %d, totals %d packets %d bytes; want %d, %d", n, s.TotalPackets, s.TotalBytes, tc.packets, tc.bytes)
			}
			in, out, local, packets := historySum(s)
			if in != tc.in || out != tc.out || local != tc.local || packets != tc.packets {
				t.Errorf("history in/out/local/packets = %d/%d/%d/%d, want %d/%d/%d/%d", in, out, local, packets, tc.in, tc.out, tc.local, tc.packets)
			}
			if diff := cmp.Diff(s.Protocols, tc.protocols); diff != "" {
				t.Errorf("protocols (-got, +want):\n%s", diff)
			}
			c := e.Counters()
			if c.DecodeErrors != tc.decodeErr || c.DNSErrors != tc.dnsErr {
				t.Errorf("counters = %+v, want %d decode and %d DNS errors", c, tc.decodeErr, tc.dnsErr)
			}
		})
	}
}

func findDomain(s Snapshot, name string) (Domain, bool) {
	for _, d := range s.TopDomains {
		if d.Domain == name {
			return d, true
		}
	}
	return Domain{}, false
}

func findEndpoint(s Snapshot, ip string) (Endpoint, bool) {
	for _, ep := range s.TopEndpoints {
		if ep.IP == ip {
			return ep, true
		}
	}
	return Endpoint{}, false
}

func TestDNSFixture(t *testing.T) {
	e, _ := replayFile(t, "dns.pcap")
	s := e.Snapshot()

	want := map[string]Domain{
		// CNAME www.example.com -> edge.example.net: the addresses belong
		// to the name asked for; three queries (A, AAAA, A again)
		"www.example.com":    {Domain: "www.example.com", Queries: 3, Responses: 3, IPs: []string{"93.184.216.34", "93.184.216.35", "2606:2800:220:1:248:1893:25c8:1946"}},
		"many.example.org":   {Domain: "many.example.org", Queries: 1, Responses: 1, IPs: []string{"198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"}},
		"nosuch.example.org": {Domain: "nosuch.example.org", Queries: 1, Responses: 1, IPs: []string{}},
		"mixed.example.com":  {Domain: "mixed.example.com", Queries: 1, Responses: 1, IPs: []string{"192.0.2.80"}},
		"tcp.example.com":    {Domain: "tcp.example.com", Queries: 1, Responses: 1, IPs: []string{"192.0.2.53"}},
	}
	for name, w := range want {
		got, ok := findDomain(s, name)
		if !ok {
			t.Errorf("domain %q missing", name)
			continue
		}
		if diff := cmp.Diff(got, w); diff != "" {
			t.Errorf("domain %q (-got, +want):\n%s", name, diff)
		}
	}
	for _, excluded := range []string{"34.216.184.93.in-addr.arpa", "printer.local", "wpad", "edge.example.net"} {
		if _, ok := findDomain(s, excluded); ok {
			t.Errorf("domain %q should not be tracked", excluded)
		}
	}
	if len(s.TopDomains) != 7 {
		t.Errorf("%d domains, want 7", len(s.TopDomains))
	}
	for ip, host := range map[string]string{"93.184.216.34": "www.example.com", "192.168.1.50": "printer.local", "8.8.8.8": ""} {
		ep, ok := findEndpoint(s, ip)
		if !ok || ep.Hostname != host {
			t.Errorf("endpoint %s = %+v, want hostname %q", ip, ep, host)
		}
	}
	if ep, _ := findEndpoint(s, "93.184.216.34"); ep.In != 2908 || ep.Out != 508 || ep.Country != "US" || ep.ASN != "AS15133" || ep.Local {
		t.Errorf("93.184.216.34 = %+v", ep)
	}
}

// TestHostileNames is the engine side of RELIABILITY case 29: names are
// kept as data, byte for byte, and encoding/json escapes them.
func TestHostileNames(t *testing.T) {
	e, _ := replayFile(t, "dns.pcap")
	s := e.Snapshot()
	img := "<img src=x onerror=alert(1)>.evil.test"
	ctrl := "\x1b[31mred\x00.evil.test"
	for _, name := range []string{img, ctrl} {
		if _, ok := findDomain(s, name); !ok {
			t.Errorf("domain %q not kept byte for byte", name)
		}
	}
	if ep, _ := findEndpoint(s, "203.0.113.66"); ep.Hostname != img {
		t.Errorf("hostname of 203.0.113.66 = %q, want %q", ep.Hostname, img)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("<img")) || bytes.Contains(b, []byte{0x1b}) || bytes.Contains(b, []byte{0}) {
		t.Errorf("raw markup or control bytes in JSON: %s", b)
	}
	for _, esc := range []string{`\u003cimg src=x onerror=alert(1)\u003e.evil.test`, `\u001b[31mred\u0000.evil.test`} {
		if !bytes.Contains(b, []byte(esc)) {
			t.Errorf("JSON lacks %s", esc)
		}
	}
}

func TestVLANAndSLL2(t *testing.T) {
	e, _ := replayFile(t, "vlan.pcap")
	s := e.Snapshot()
	if d, ok := findDomain(s, "vlan.example.com"); !ok || !slices.Equal(d.IPs, []string{"192.0.2.10"}) {
		t.Errorf("DNS inside QinQ: %+v", d)
	}
	if ep, _ := findEndpoint(s, "140.82.112.3"); ep.In != 1374 || ep.Out != 324 || ep.Packets != 6 {
		t.Errorf("802.1Q endpoint = %+v", ep)
	}
	e, _ = replayFile(t, "sll2.pcapng")
	s = e.Snapshot()
	if ep, _ := findEndpoint(s, "2a04:4e42::485"); ep.In != 980 || ep.Out != 200 {
		t.Errorf("SLL2 IPv6 endpoint = %+v", ep)
	}
}

func TestSnapshotEmpty(t *testing.T) {
	b, err := json.Marshal(newTestEngine().Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"error":""`, `"protocols":{}`, `"top_endpoints":[]`, `"top_ports":[]`, `"top_domains":[]`, `"history":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("empty snapshot lacks %s: %s", want, b)
		}
	}
}

func TestReset(t *testing.T) {
	e, _ := replayFile(t, "dns.pcap")
	_ = e.TakeRemoteMinute()
	e.Reset()
	empty, err := json.Marshal(newTestEngine().Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(e.Snapshot())
	if !bytes.Equal(got, empty) {
		t.Errorf("after Reset: %s, want %s", got, empty)
	}
	if c := e.Counters(); c != (Counters{}) {
		t.Errorf("counters after Reset: %+v", c)
	}
	if m := e.TakeRemoteMinute(); len(m) != 0 {
		t.Errorf("remote minute after Reset: %v", m)
	}
	// and it counts again from zero, with the same result as a fresh engine
	src, err := OpenFile(pcapDir + "/dns.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := Replay(src, e); err != nil {
		t.Fatal(err)
	}
	fresh, _ := replayFile(t, "dns.pcap")
	a, _ := json.Marshal(e.Snapshot())
	b, _ := json.Marshal(fresh.Snapshot())
	if !bytes.Equal(a, b) {
		t.Errorf("replay after Reset differs from a fresh engine:\n%s\n%s", a, b)
	}
}

// loadFrames reads every frame of the named fixtures.
func loadFrames(t testing.TB, names ...string) []frame {
	t.Helper()
	var out []frame
	for _, name := range names {
		src, err := OpenFile(pcapDir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for {
			data, ci, err := src.ReadPacketData()
			if err != nil {
				break
			}
			out = append(out, frame{ts: ci.Timestamp, data: data, wireLen: ci.Length})
		}
		src.Close()
	}
	return out
}

func TestProcessAllocs(t *testing.T) {
	frames := loadFrames(t, "mixed.pcap", "dns.pcap", "vlan.pcap")
	e := newTestEngine()
	for _, f := range frames { // warm up: tables, names and parser slices
		e.Process(f.data, f.ci())
	}
	cis := make([]gopacket.CaptureInfo, len(frames))
	for i, f := range frames {
		cis[i] = f.ci()
	}
	i := 0
	allocs := testing.AllocsPerRun(5000, func() {
		e.Process(frames[i].data, cis[i])
		i = (i + 1) % len(frames)
	})
	if allocs != 0 {
		t.Errorf("Process allocates %.3f times per packet in steady state, want 0", allocs)
	}
}

// TestConcurrentSnapshot runs Process against Snapshot, Minute,
// TakeRemoteMinute and Reset; run with -race.
func TestConcurrentSnapshot(t *testing.T) {
	frames := loadFrames(t, "mixed.pcap", "dns.pcap", "vlan.pcap", "corrupt.pcap")
	e := newTestEngine()
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := 0; round < 200; round++ {
			for _, f := range frames {
				ci := f.ci()
				ci.Timestamp = ci.Timestamp.Add(time.Duration(round) * 10 * time.Second)
				e.Process(f.data, ci)
			}
		}
		close(done)
	}()
	for {
		select {
		case <-done:
			wg.Wait()
			return
		default:
		}
		s := e.Snapshot()
		if _, err := json.Marshal(s); err != nil {
			t.Fatal(err)
		}
		e.Minute(fixtureBase.Unix())
		e.TakeRemoteMinute()
		_ = e.Counters()
		if s.TotalPackets%7 == 3 {
			e.Reset()
		}
	}
}

func TestUnknownLinkType(t *testing.T) {
	e := newTestEngine()
	if err := e.SetLinkType(147); err == nil {
		t.Error("SetLinkType(147) accepted")
	}
	if lt := e.LinkType(); lt != 1 {
		t.Errorf("link type after a refused change = %v, want Ethernet", lt)
	}
}

// TestLinkTypes feeds the same IPv4 and IPv6 packets under every link
// type SetLinkType accepts.
func TestLinkTypes(t *testing.T) {
	v4 := pkt{src: "192.168.1.10", dst: "93.184.216.34", tcp: tcpSeg(50000, 443), payload: pad(10)}.bytes()[14:]
	v6 := pkt{src: "2001:db8:1::10", dst: "2606:4700::1111", udp: udpDgram(50000, 443), payload: pad(10)}.bytes()[14:]
	sll := func(et uint16, ip []byte) []byte {
		h := []byte{0, 4, 0, 1, 0, 6, 2, 0, 0, 0, 0, 0x10, 0, 0, byte(et >> 8), byte(et)}
		return append(h, ip...)
	}
	tests := []struct {
		lt     layers.LinkType
		v4, v6 []byte
	}{
		{layers.LinkTypeLinuxSLL, sll(0x0800, v4), sll(0x86dd, v6)},
		{layers.LinkTypeRaw, v4, v6},
		{layers.LinkTypeIPv4, v4, nil},
		{layers.LinkTypeIPv6, nil, v6},
		{layers.LinkTypeNull, append([]byte{2, 0, 0, 0}, v4...), append([]byte{30, 0, 0, 0}, v6...)}, // little-endian AF_INET, AF_INET6 (macOS)
		{layers.LinkTypeLoop, append([]byte{0, 0, 0, 2}, v4...), append([]byte{0, 0, 0, 24}, v6...)}, // big-endian, AF_INET6 (OpenBSD)
	}
	for _, tc := range tests {
		t.Run(tc.lt.String(), func(t *testing.T) {
			e := newTestEngine()
			if err := e.SetLinkType(tc.lt); err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{}
			if tc.v4 != nil {
				process(e, at(0, 0), tc.v4)
				want["TCP"] = 1
			}
			if tc.v6 != nil {
				process(e, at(0, 1), tc.v6)
				want["UDP"] = 1
			}
			s := e.Snapshot()
			if diff := cmp.Diff(s.Protocols, want); diff != "" {
				t.Errorf("protocols (-got, +want):\n%s", diff)
			}
			if _, out, _, _ := historySum(s); out != s.TotalBytes || len(s.TopEndpoints) != len(want) {
				t.Errorf("out %d of %d bytes, %d endpoints", out, s.TotalBytes, len(s.TopEndpoints))
			}
		})
	}
}
