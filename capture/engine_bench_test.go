package capture

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// benchFrames generates a realistic capture of n frames over about ten
// seconds, deterministically: a host at 192.168.1.10 talking to 2 000
// IPv4 and 300 IPv6 remotes chosen with a Zipf law (a few heavy, many
// light), mostly HTTPS (full 1514-byte segments in, ACKs out), QUIC, NTP,
// SSH, DNS exchanges for 300 names (A, AAAA, CNAME chains) with the LAN
// resolver, ICMP, ARP, LAN traffic and 10 % VLAN-tagged frames.
func benchFrames(n int) []frame {
	r := rand.New(rand.NewPCG(1, 2))
	v4 := make([]string, 2000)
	for i := range v4 {
		v4[i] = netip.AddrFrom4([4]byte{byte(20 + r.IntN(180)), byte(r.IntN(256)), byte(r.IntN(256)), byte(1 + r.IntN(254))}).String()
	}
	v6 := make([]string, 300)
	for i := range v6 {
		v6[i] = fmt.Sprintf("2a00:%x:%x::%x", r.IntN(0xffff), r.IntN(0xffff), 1+r.IntN(0xfffe))
	}
	zipf4 := rand.NewZipf(r, 1.2, 1, uint64(len(v4)-1))
	zipf6 := rand.NewZipf(r, 1.2, 1, uint64(len(v6)-1))
	names := make([]string, 300)
	for i := range names {
		names[i] = fmt.Sprintf("svc%d.example%d.com", i, i%17)
	}
	var fs []frame
	step := 10 * time.Second / time.Duration(n)
	for i := 0; len(fs) < n; i++ {
		ts := fixtureBase.Add(time.Duration(i) * step)
		var vlans []uint16
		if r.IntN(10) == 0 {
			vlans = []uint16{10}
		}
		add := func(p pkt) { p.vlans = vlans; fs = append(fs, frame{ts: ts, data: p.bytes()}) }
		remote := v4[zipf4.Uint64()]
		own := "192.168.1.10"
		if r.IntN(8) == 0 {
			remote, own = v6[zipf6.Uint64()], "2001:db8:1::10"
		}
		sport := uint16(32768 + r.IntN(28000))
		switch k := r.IntN(100); {
		case k < 45: // HTTPS download: a full segment in
			add(pkt{srcMAC: macGW, src: remote, dst: own, tcp: tcpSeg(443, sport), payload: pad(1460 - 20*btoi(own != "192.168.1.10"))})
		case k < 65: // its ACK out
			add(pkt{src: own, dst: remote, tcp: tcpSeg(sport, 443)})
		case k < 75: // QUIC
			add(pkt{src: own, dst: remote, udp: udpDgram(sport, 443), payload: pad(1200)})
		case k < 80: // SSH, HTTP
			add(pkt{src: own, dst: remote, tcp: tcpSeg(sport, []uint16{22, 80}[r.IntN(2)]), payload: pad(r.IntN(400))})
		case k < 90: // DNS with the LAN resolver, query then response
			name := names[r.IntN(len(names))]
			qid := uint16(r.IntN(65536))
			add(pkt{src: "192.168.1.10", dst: "192.168.1.1", udp: udpDgram(sport, 53), payload: dnsMsg(qid, false, 0, name, 1)})
			answers := []dnsRR{{name: name, cname: "edge." + name}, {name: "edge." + name, addr: v4[r.IntN(len(v4))]}}
			if r.IntN(3) == 0 {
				answers = append(answers, dnsRR{name: "edge." + name, addr: v6[r.IntN(len(v6))]})
			}
			add(pkt{srcMAC: macGW, src: "192.168.1.1", dst: "192.168.1.10", udp: udpDgram(53, sport), payload: dnsMsg(qid, true, 0, name, 1, answers...)})
		case k < 93: // NTP
			add(pkt{src: own, dst: remote, udp: udpDgram(123, 123), payload: pad(48)})
		case k < 95: // ping
			add(pkt{src: "192.168.1.10", dst: v4[r.IntN(len(v4))], icmp4: &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0), Id: 1, Seq: uint16(i)}, payload: pad(56)})
		case k < 96:
			fs = append(fs, frame{ts: ts, data: arpFrame(vlans, false, macOther, "192.168.1.30", "192.168.1.1")})
		default: // LAN: SMB and printing
			lan := fmt.Sprintf("192.168.1.%d", 20+r.IntN(30))
			add(pkt{src: "192.168.1.10", dst: lan, tcp: tcpSeg(sport, []uint16{445, 631}[r.IntN(2)]), payload: pad(r.IntN(1400))})
		}
	}
	return fs[:n]
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// benchPackets is benchFrames written to an in-memory pcap file. The
// frames returned are slices of that file, in file order, as a replay
// from a memory-mapped file or a capture ring sees them; FileSource reads
// their capture info.
func benchPackets(b *testing.B, n int) ([][]byte, []gopacket.CaptureInfo) {
	fx := fixture{name: "bench.pcap", link: layers.LinkTypeEthernet}
	raw := encodeFixture(b, fx, benchFrames(n))
	src, err := newFileSource(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	var data [][]byte
	var cis []gopacket.CaptureInfo
	off := 24 // classic pcap: file header, then a 16-byte header per record
	for {
		_, ci, err := src.ReadPacketData()
		if err != nil {
			break
		}
		start := off + 16
		data = append(data, raw[start:start+ci.CaptureLength:start+ci.CaptureLength])
		cis = append(cis, ci)
		off = start + ci.CaptureLength
	}
	if off != len(raw) || len(data) != n {
		b.Fatalf("walked %d of %d bytes, %d frames", off, len(raw), len(data))
	}
	return data, cis
}

// BenchmarkEngine replays a 10 000-frame realistic capture in a loop; one
// op is one frame. Each pass over the capture is shifted 10 s later so the
// history window moves as in a live capture.
func BenchmarkEngine(b *testing.B) {
	data, cis := benchPackets(b, 10000)
	e := newTestEngine()
	for i := range data { // warm up the tables
		e.Process(data[i], cis[i])
	}
	runEngineBench(b, e, data, cis, 10*time.Second)
}

// BenchmarkEngineSpoofedSources: every frame comes from a new source
// address, so the endpoint table is always full and evicting.
func BenchmarkEngineSpoofedSources(b *testing.B) {
	const n = 1 << 17
	tmpl := pkt{srcMAC: macGW, src: "20.0.0.1", dst: "192.168.1.10", tcp: tcpSeg(443, 50000), payload: pad(64)}.bytes()
	data := make([][]byte, n)
	cis := make([]gopacket.CaptureInfo, n)
	for i := range data {
		d := bytes.Clone(tmpl)
		d[27], d[28], d[29] = byte(i>>16), byte(i>>8), byte(i) // IPv4 source, checksum left stale
		data[i] = d
		cis[i] = gopacket.CaptureInfo{Timestamp: fixtureBase.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(d), Length: len(d)}
	}
	e := newTestEngine()
	for i := range data {
		e.Process(data[i], cis[i])
	}
	runEngineBench(b, e, data, cis, time.Second)
}

func runEngineBench(b *testing.B, e *Engine, data [][]byte, cis []gopacket.CaptureInfo, span time.Duration) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var shift time.Duration
	for i, j := 0, 0; i < b.N; i++ {
		ci := cis[j]
		ci.Timestamp = ci.Timestamp.Add(shift)
		e.Process(data[j], ci)
		if j++; j == len(data) {
			j, shift = 0, shift+span
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N), "ns/packet")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "packets/s")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/packet")
}

// BenchmarkSnapshot measures a snapshot of a busy engine (full tables).
func BenchmarkSnapshot(b *testing.B) {
	data, cis := benchPackets(b, 10000)
	e := newTestEngine()
	for i := range data {
		e.Process(data[i], cis[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = e.Snapshot()
	}
}
