package capture

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket"
)

func process(e *Engine, ts time.Time, data []byte) {
	e.Process(data, gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(data), Length: len(data)})
}

func TestClassify(t *testing.T) {
	e := newTestEngine() // own 192.168.1.10/24, 2001:db8:1::10/64, fe80::10/64
	tests := []struct {
		desc     string
		src, dst string
		dir      direction
		endpoint string // "" for none
	}{
		{"own to public: out", "192.168.1.10", "93.184.216.34", dirOut, "93.184.216.34"},
		{"public to own: in", "93.184.216.34", "192.168.1.10", dirIn, "93.184.216.34"},
		{"own v6 to public v6: out", "2001:db8:1::10", "2606:4700::1111", dirOut, "2606:4700::1111"},
		{"public v6 to own v6: in", "2606:4700::1111", "2001:db8:1::10", dirIn, "2606:4700::1111"},
		{"own to LAN host: local", "192.168.1.10", "192.168.1.20", dirLocal, "192.168.1.20"},
		{"LAN host to own: local", "192.168.1.20", "192.168.1.10", dirLocal, "192.168.1.20"},
		{"own to another private net (VPN): local", "192.168.1.10", "10.8.0.1", dirLocal, "10.8.0.1"},
		{"own to itself: local, no endpoint", "192.168.1.10", "192.168.1.10", dirLocal, ""},
		{"loopback: local", "127.0.0.1", "127.0.0.1", dirLocal, "127.0.0.1"},
		{"two LAN hosts (promiscuous): local, the source", "192.168.1.30", "192.168.1.40", dirLocal, "192.168.1.30"},
		{"LAN host to multicast: local", "192.168.1.20", "224.0.0.251", dirLocal, "192.168.1.20"},
		{"own to subnet broadcast: local", "192.168.1.10", "192.168.1.255", dirLocal, "192.168.1.255"},
		{"DHCP discover: local", "0.0.0.0", "255.255.255.255", dirLocal, "0.0.0.0"},
		{"link-local v6 to all-nodes: local", "fe80::10", "ff02::1", dirLocal, "ff02::1"},
		{"ULA to own v6: local", "fd00::5", "2001:db8:1::10", dirLocal, "fd00::5"},
		{"other LAN host to public (router view): out", "192.168.1.30", "8.8.8.8", dirOut, "8.8.8.8"},
		{"public to other LAN host: in", "8.8.8.8", "192.168.1.30", dirIn, "8.8.8.8"},
		{"transit between public addresses: in, the source", "203.0.113.5", "198.51.100.7", dirIn, "203.0.113.5"},
		{"own public v6 neighbour in the same /64: local", "2001:db8:1::10", "2001:db8:1::99", dirLocal, "2001:db8:1::99"},
		{"public to a LAN address of another prefix: in", "9.9.9.9", "172.16.0.1", dirIn, "9.9.9.9"},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			dir, ep := e.classify(netip.MustParseAddr(tc.src), netip.MustParseAddr(tc.dst))
			got := ""
			if ep.IsValid() {
				got = ep.String()
			}
			if dir != tc.dir || got != tc.endpoint {
				t.Errorf("classify(%s, %s) = %v, %q; want %v, %q", tc.src, tc.dst, dir, got, tc.dir, tc.endpoint)
			}
		})
	}
}

func TestServicePort(t *testing.T) {
	tests := []struct{ a, b, want uint16 }{
		{50000, 443, 443},
		{443, 50000, 443},
		{40000, 7777, 7777}, // neither known: the lower
		{3000, 443, 443},    // both known: the lower
		{50000, 8080, 8080}, // known beats lower
		{1024, 5432, 5432},  // known beats lower
		{123, 123, 123},
	}
	for _, tc := range tests {
		if got := servicePort(tc.a, tc.b); got != tc.want {
			t.Errorf("servicePort(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if ServiceName(443) != "HTTPS" || ServiceName(7777) != "" {
		t.Error("ServiceName table")
	}
}

// dnsResponse is a UDP DNS response from 8.8.8.8 to the own host.
func dnsResponse(id uint16, qname string, answers ...dnsRR) []byte {
	return pkt{srcMAC: macGW, src: "8.8.8.8", dst: "192.168.1.10", udp: udpDgram(53, 40000), payload: dnsMsg(id, true, 0, qname, 1, answers...)}.bytes()
}

func TestDomainTable(t *testing.T) {
	t.Run("4096 domains, least recently seen evicted", func(t *testing.T) {
		e := newTestEngine()
		for i := 0; i < 4096; i++ {
			process(e, at(0, 0), dnsResponse(1, fmt.Sprintf("d%d.example.com", i)))
		}
		process(e, at(1, 0), dnsResponse(1, "d0.example.com"))  // d0 is now the most recent
		process(e, at(2, 0), dnsResponse(1, "new.example.com")) // evicts d1, the least recent
		st := &e.st
		if n := len(st.domains.index); n != 4096 {
			t.Fatalf("%d domains, want 4096", n)
		}
		for name, want := range map[string]bool{"d0.example.com": true, "d1.example.com": false, "d2.example.com": true, "new.example.com": true} {
			if got := st.domains.lookup([]byte(name)) != nil; got != want {
				t.Errorf("%s present = %v, want %v", name, got, want)
			}
		}
		if c := e.Counters(); c.DomainsEvicted != 1 {
			t.Errorf("DomainsEvicted = %d, want 1", c.DomainsEvicted)
		}
		if d, _ := findDomain(e.Snapshot(), "d0.example.com"); d.Responses != 2 {
			t.Errorf("d0 = %+v, want 2 responses at the top", d)
		}
		if n := len(e.Snapshot().TopDomains); n != 30 {
			t.Errorf("%d top domains, want 30", n)
		}
	})
	t.Run("4 addresses per domain, first kept, no duplicates", func(t *testing.T) {
		e := newTestEngine()
		var rrs []dnsRR
		for i := 1; i <= 6; i++ {
			rrs = append(rrs, dnsRR{name: "cap.example.com", addr: fmt.Sprintf("198.51.100.%d", i)})
		}
		process(e, at(0, 0), dnsResponse(1, "cap.example.com", dnsRR{name: "cap.example.com", addr: "198.51.100.2"}))
		process(e, at(0, 1), dnsResponse(2, "cap.example.com", rrs...))
		d, _ := findDomain(e.Snapshot(), "cap.example.com")
		if want := []string{"198.51.100.2", "198.51.100.1", "198.51.100.3", "198.51.100.4"}; !slices.Equal(d.IPs, want) {
			t.Errorf("IPs = %v, want %v", d.IPs, want)
		}
	})
	t.Run("excluded names", func(t *testing.T) {
		e := newTestEngine()
		for _, name := range []string{"4.3.2.1.in-addr.arpa", "b.a.9.8.ip6.arpa", "nas.local", "local", "wpad", "localhost", "ok.example"} {
			process(e, at(0, 0), dnsResponse(1, name))
		}
		var got []string
		for _, d := range e.Snapshot().TopDomains {
			got = append(got, d.Domain)
		}
		if diff := cmp.Diff(got, []string{"ok.example"}); diff != "" {
			t.Errorf("domains (-got, +want):\n%s", diff)
		}
	})
	t.Run("queries and responses", func(t *testing.T) {
		e := newTestEngine()
		q := pkt{src: "192.168.1.10", dst: "8.8.8.8", udp: udpDgram(40000, 53), payload: dnsMsg(1, false, 0, "qr.example.com", 1)}.bytes()
		process(e, at(0, 0), q)
		process(e, at(0, 1), q)
		process(e, at(0, 2), dnsResponse(1, "qr.example.com"))
		if d, _ := findDomain(e.Snapshot(), "qr.example.com"); d.Queries != 2 || d.Responses != 1 {
			t.Errorf("qr.example.com = %+v, want 2 queries, 1 response", d)
		}
	})
}

func TestHostnames(t *testing.T) {
	e := newTestEngine()
	a := "93.184.216.34"
	traffic := pkt{src: "192.168.1.10", dst: a, tcp: tcpSeg(50000, 443), payload: pad(10)}.bytes()
	process(e, at(0, 0), traffic)
	host := func() string { ep, _ := findEndpoint(e.Snapshot(), a); return ep.Hostname }
	if h := host(); h != "" {
		t.Errorf("hostname before DNS = %q", h)
	}
	process(e, at(1, 0), dnsResponse(1, "first.example.com", dnsRR{name: "first.example.com", addr: a}))
	if h := host(); h != "first.example.com" {
		t.Errorf("hostname = %q, want first.example.com", h)
	}
	// the latest name wins; a CNAME chain maps to the name asked for
	process(e, at(2, 0), dnsResponse(2, "second.example.com",
		dnsRR{name: "second.example.com", cname: "cdn.example.net"},
		dnsRR{name: "cdn.example.net", cname: "edge.cdn.example.net"},
		dnsRR{name: "edge.cdn.example.net", addr: a}))
	if h := host(); h != "second.example.com" {
		t.Errorf("hostname = %q, want second.example.com", h)
	}
	// an answer not reached from the question maps to its own name
	process(e, at(3, 0), dnsResponse(3, "third.example.com", dnsRR{name: "stray.example.org", addr: a}))
	if h := host(); h != "stray.example.org" {
		t.Errorf("hostname = %q, want stray.example.org", h)
	}
	if d, _ := findDomain(e.Snapshot(), "third.example.com"); len(d.IPs) != 0 {
		t.Errorf("stray address added to the question: %+v", d)
	}

	t.Run("bounded", func(t *testing.T) {
		e := newTestEngine()
		e.st.lim.hostnames = 100
		for i := 0; i < 300; i++ {
			ip := netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}).String()
			process(e, at(0, 0), dnsResponse(1, "h.example.com", dnsRR{name: "h.example.com", addr: ip}))
		}
		if n := len(e.st.hostnames); n != 100 {
			t.Errorf("%d hostnames, want the bound 100", n)
		}
	})
}

func TestEndpointBound(t *testing.T) {
	e := newTestEngine()
	e.st.lim.endpoints = 1000
	e.st.epSlab = make([]endpointStat, 0, 1000)
	big := "93.184.216.34"
	for i := 0; i < 50; i++ {
		process(e, at(0, 0), pkt{src: "192.168.1.10", dst: big, tcp: tcpSeg(50000, 443), payload: pad(1000)}.bytes())
	}
	for i := 0; i < 20000; i++ {
		ip := netip.AddrFrom4([4]byte{100, 100 + byte(i>>16), byte(i >> 8), byte(i)}).String()
		process(e, at(0, 0), pkt{srcMAC: macGW, src: ip, dst: "192.168.1.10", tcp: tcpSeg(443, 50000), payload: pad(1)}.bytes())
	}
	if n := len(e.st.endpoints); n > 1000 || n < 900 {
		t.Errorf("%d endpoints, want at most 1000 and not far below", n)
	}
	if cap(e.st.epSlab) != 1000 {
		t.Errorf("slab grew to %d", cap(e.st.epSlab))
	}
	s := e.Snapshot()
	if s.TopEndpoints[0].IP != big || s.TopEndpoints[0].Out != 50*1054 {
		t.Errorf("top endpoint = %+v, want the heavy %s kept", s.TopEndpoints[0], big)
	}
	if c := e.Counters(); c.EndpointsEvicted < 19000 {
		t.Errorf("EndpointsEvicted = %d", c.EndpointsEvicted)
	}
	if len(s.TopEndpoints) != 50 {
		t.Errorf("%d top endpoints, want 50", len(s.TopEndpoints))
	}
}

func TestNthSmallest(t *testing.T) {
	for n := 1; n < 60; n++ {
		v := make([]int64, n)
		for i := range v {
			v[i] = int64((i * 7919) % 13) // many duplicates
		}
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		for k := 0; k < n; k++ {
			w := slices.Clone(v)
			if got := nthSmallest(w, k); got != sorted[k] {
				t.Fatalf("n=%d k=%d: %d, want %d", n, k, got, sorted[k])
			}
		}
	}
}

func TestHistory(t *testing.T) {
	out := pkt{src: "192.168.1.10", dst: "93.184.216.34", tcp: tcpSeg(50000, 443), payload: pad(46)}.bytes()                // 100 bytes
	in := pkt{srcMAC: macGW, src: "93.184.216.34", dst: "192.168.1.10", tcp: tcpSeg(443, 50000), payload: pad(146)}.bytes() // 200 bytes
	if len(out) != 100 || len(in) != 200 {
		t.Fatalf("frame sizes %d, %d", len(out), len(in))
	}

	t.Run("gaps are zero seconds", func(t *testing.T) {
		e := newTestEngine()
		process(e, at(0, 0), out)
		process(e, at(3, 0), in)
		process(e, at(3, 500), in)
		s := e.Snapshot()
		base := fixtureBase.Unix()
		want := []Bucket{
			{TS: base, Out: 100, Packets: 1},
			{TS: base + 1}, {TS: base + 2},
			{TS: base + 3, In: 400, Packets: 2},
		}
		if diff := cmp.Diff(s.History, want); diff != "" {
			t.Errorf("history (-got, +want):\n%s", diff)
		}
		// second 3 is in progress: the rates are those of second 2
		if s.BpsIn != 0 || s.PPS != 0 {
			t.Errorf("rates = %v/%v, want those of the silent second 2", s.BpsIn, s.PPS)
		}
		process(e, at(4, 0), out)
		if s := e.Snapshot(); s.BpsIn != 3200 || s.BpsOut != 0 || s.PPS != 2 {
			t.Errorf("rates of second 3 = in %v out %v pps %v, want 3200, 0, 2", s.BpsIn, s.BpsOut, s.PPS)
		}
	})
	t.Run("the last 120 seconds", func(t *testing.T) {
		e := newTestEngine()
		for sec := 0; sec < 300; sec++ {
			process(e, at(sec, 0), out)
		}
		h := e.Snapshot().History
		if len(h) != 120 || h[0].TS != fixtureBase.Unix()+180 || h[119].TS != fixtureBase.Unix()+299 {
			t.Errorf("history has %d buckets from %d to %d", len(h), h[0].TS-fixtureBase.Unix(), h[len(h)-1].TS-fixtureBase.Unix())
		}
		// a packet older than the ring counts in the totals only
		process(e, at(10, 0), in)
		s := e.Snapshot()
		_, _, _, packets := historySum(s)
		if s.TotalPackets != 301 || packets != 120 {
			t.Errorf("total %d, history %d packets", s.TotalPackets, packets)
		}
	})
	t.Run("an idle capture's clock moves the window", func(t *testing.T) {
		now := at(0, 0)
		e := NewEngine(EngineConfig{LocalNets: testLocalNets, Now: func() time.Time { return now }}, nil)
		process(e, at(0, 0), out)
		now = at(1, 500)
		s := e.Snapshot()
		if s.BpsOut != 800 || len(s.History) != 2 {
			t.Errorf("at 1.5 s: bps_out %v, %d buckets; want 800, 2", s.BpsOut, len(s.History))
		}
		now = at(500, 0)
		s = e.Snapshot()
		if s.BpsOut != 0 || len(s.History) != 120 || s.History[119].TS != fixtureBase.Unix()+500 {
			t.Errorf("after 500 idle seconds: bps_out %v, %d buckets", s.BpsOut, len(s.History))
		}
		for _, b := range s.History {
			if b.Packets != 0 {
				t.Errorf("stale bucket %+v", b)
			}
		}
	})
}

func TestMinute(t *testing.T) {
	out := pkt{src: "192.168.1.10", dst: "93.184.216.34", tcp: tcpSeg(50000, 443), payload: pad(46)}.bytes()                // 100 bytes
	in := pkt{srcMAC: macGW, src: "93.184.216.34", dst: "192.168.1.10", tcp: tcpSeg(443, 50000), payload: pad(146)}.bytes() // 200 bytes
	lan := pkt{src: "192.168.1.10", dst: "192.168.1.20", tcp: tcpSeg(50000, 445), payload: pad(46)}.bytes()                 // 100 bytes
	now := at(0, 0)
	e := NewEngine(EngineConfig{LocalNets: testLocalNets, Now: func() time.Time { return now }}, nil)
	m0 := fixtureBase.Unix()           // a multiple of 60
	for sec := 0; sec < 60; sec += 2 { // 30 seconds with data
		process(e, at(sec, 0), out)
		process(e, at(sec, 100), in)
		process(e, at(sec, 200), lan)
	}
	process(e, at(30, 0), in) // a busier second: peak in 400
	if _, ok := e.Minute(m0); ok {
		t.Error("Minute ok while the minute is in progress")
	}
	now = at(62, 0)
	got, ok := e.Minute(m0)
	want := MinuteStats{TS: m0, In: 31 * 200, Out: 30 * 100, Local: 30 * 100, Packets: 91, PeakIn: 400, PeakOut: 100, Seconds: 30}
	if !ok || got != want {
		t.Errorf("Minute = %+v, %v; want %+v, true", got, ok, want)
	}
	if got, ok := e.Minute(m0 + 60); ok || got.Packets != 0 {
		t.Errorf("next minute = %+v, %v; want in progress", got, ok)
	}
	now = at(179, 0)
	if _, ok := e.Minute(m0); !ok {
		t.Error("Minute not ok 119 s after the minute ended")
	}
	now = at(181, 0)
	if _, ok := e.Minute(m0); ok {
		t.Error("Minute ok after it left the ring")
	}
}

func TestTakeRemoteMinute(t *testing.T) {
	e := newTestEngine()
	process(e, at(0, 0), pkt{src: "192.168.1.10", dst: "93.184.216.34", tcp: tcpSeg(50000, 443), payload: pad(46)}.bytes())
	process(e, at(0, 1), pkt{srcMAC: macGW, src: "93.184.216.34", dst: "192.168.1.10", tcp: tcpSeg(443, 50000), payload: pad(146)}.bytes())
	process(e, at(0, 2), pkt{src: "192.168.1.10", dst: "192.168.1.20", tcp: tcpSeg(50000, 445), payload: pad(46)}.bytes())
	process(e, at(0, 3), pkt{src: "2001:db8:1::10", dst: "2606:4700::1111", udp: udpDgram(50000, 443), payload: pad(10)}.bytes())
	got := e.TakeRemoteMinute()
	want := map[netip.Addr]int64{
		netip.MustParseAddr("93.184.216.34"):   300,
		netip.MustParseAddr("2606:4700::1111"): 72,
	}
	if diff := cmp.Diff(got, want, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
		t.Errorf("first period (-got, +want):\n%s", diff)
	}
	if got := e.TakeRemoteMinute(); len(got) != 0 {
		t.Errorf("second period = %v, want empty", got)
	}

	e.st.lim.remoteMinute = 10
	for i := 0; i < 15; i++ {
		ip := netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}).String()
		process(e, at(1, 0), pkt{src: "192.168.1.10", dst: ip, tcp: tcpSeg(50000, 443), payload: pad(46)}.bytes())
	}
	if got := e.TakeRemoteMinute(); len(got) != 10 {
		t.Errorf("%d addresses, want the bound 10", len(got))
	}
	if c := e.Counters(); c.RemoteOverflow != 5 || c.RemoteOverflowBytes != 500 {
		t.Errorf("overflow = %d packets, %d bytes; want 5, 500", c.RemoteOverflow, c.RemoteOverflowBytes)
	}
}

// TestLocalScope checks the byte tests of localScope against netip's
// predicates.
func TestLocalScope(t *testing.T) {
	ref := func(a netip.Addr) bool {
		return a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() ||
			a.IsMulticast() || a.IsUnspecified() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255})
	}
	var addrs []netip.Addr
	for b0 := 0; b0 < 256; b0++ {
		for _, b1 := range []byte{0, 1, 15, 16, 31, 32, 167, 168, 169, 253, 254, 255} {
			for _, tail := range [][2]byte{{0, 0}, {0, 1}, {255, 255}} {
				addrs = append(addrs, netip.AddrFrom4([4]byte{byte(b0), b1, tail[0], tail[1]}))
				var v6 [16]byte
				v6[0], v6[1], v6[15] = byte(b0), b1, tail[1]
				addrs = append(addrs, netip.AddrFrom16(v6))
			}
		}
	}
	addrs = append(addrs, netip.MustParseAddr("::1"), netip.MustParseAddr("::"), netip.MustParseAddr("::2"),
		netip.MustParseAddr("fe80::1"), netip.MustParseAddr("febf::1"), netip.MustParseAddr("fec0::1"))
	for _, a := range addrs {
		if got, want := localScope(a), ref(a); got != want {
			t.Errorf("localScope(%v) = %v, want %v", a, got, want)
		}
	}
}
