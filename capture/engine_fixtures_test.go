package capture

import (
	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

var regenPcap = flag.Bool("regen-pcap", false, "rewrite testdata/pcap from the fixture generators")

const pcapDir = "../testdata/pcap"

// fixture is one synthetic capture file of testdata/pcap.
type fixture struct {
	name   string
	link   layers.LinkType
	ng     bool // pcapng instead of classic pcap
	frames func() []frame
}

var fixtures = []fixture{
	{"mixed.pcap", layers.LinkTypeEthernet, false, mixedFrames},
	{"dns.pcap", layers.LinkTypeEthernet, false, dnsFrames},
	{"vlan.pcap", layers.LinkTypeEthernet, false, vlanFrames},
	{"corrupt.pcap", layers.LinkTypeEthernet, false, corruptFrames},
	{"sll2.pcapng", layers.LinkTypeLinuxSLL2, true, sll2Frames},
}

// mixedFrames: TCP, UDP, ICMP and ICMPv6 over IPv4 and IPv6 in every
// direction, ARP, multicast, a transit packet, GRE and LLDP, over ten
// seconds with seconds 5 to 7 silent. 41 frames, 17 982 bytes; out 3 662,
// in 13 272, local 1 048 (see testdata/pcap/README.md).
func mixedFrames() []frame {
	var fs []frame
	add := func(ts int, ms int, p []byte) { fs = append(fs, frame{ts: at(ts, ms), data: p}) }
	for s := 0; s <= 4; s++ {
		for i := 0; i < 2; i++ {
			add(s, 100+i*200, pkt{src: "192.168.1.10", dst: "93.184.216.34", tcp: tcpSeg(50000, 443), payload: pad(100)}.bytes())
			add(s, 200+i*200, pkt{srcMAC: macGW, src: "93.184.216.34", dst: "192.168.1.10", tcp: tcpSeg(443, 50000), payload: pad(1000)}.bytes())
		}
	}
	add(0, 50, arpFrame(nil, false, macOwn, "192.168.1.10", "192.168.1.1"))
	add(0, 60, arpFrame(nil, true, macGW, "192.168.1.1", "192.168.1.10"))
	for s := 0; s <= 1; s++ {
		add(s, 700, pkt{src: "192.168.1.10", dst: "192.168.1.20", tcp: tcpSeg(49800, 445), payload: pad(300)}.bytes())
	}
	add(1, 800, pkt{src: "192.168.1.10", dst: "162.159.200.1", udp: udpDgram(123, 123), payload: pad(48)}.bytes())
	add(1, 850, pkt{srcMAC: macGW, src: "162.159.200.1", dst: "192.168.1.10", udp: udpDgram(123, 123), payload: pad(48)}.bytes())
	add(2, 900, pkt{srcMAC: macOther, src: "192.168.1.20", dst: "224.0.0.251", udp: udpDgram(5353, 5353), payload: dnsMsg(0, false, 0, "_ipp._tcp.local", 12)}.bytes())
	for s := 2; s <= 3; s++ {
		add(s, 500, pkt{src: "2001:db8:1::10", dst: "2606:4700::1111", tcp: tcpSeg(50010, 443), payload: pad(200)}.bytes())
		add(s, 550, pkt{srcMAC: macGW, src: "2606:4700::1111", dst: "2001:db8:1::10", tcp: tcpSeg(443, 50010), payload: pad(500)}.bytes())
	}
	add(3, 950, pkt{srcMAC: macOther, src: "192.168.1.30", dst: "192.168.1.40", tcp: tcpSeg(51000, 22), payload: pad(60)}.bytes())
	echo := &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeEchoRequest, 0), Id: 7, Seq: 1}
	reply := &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeEchoReply, 0), Id: 7, Seq: 1}
	add(4, 900, pkt{src: "192.168.1.10", dst: "1.1.1.1", icmp4: echo, payload: pad(32)}.bytes())
	add(4, 950, pkt{srcMAC: macGW, src: "1.1.1.1", dst: "192.168.1.10", icmp4: reply, payload: pad(32)}.bytes())
	// seconds 5, 6 and 7: nothing
	add(8, 100, pkt{src: "2001:db8:1::10", dst: "2a00:1450:4001::200e", udp: udpDgram(55000, 443), payload: pad(1200)}.bytes())
	echo6 := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeEchoRequest, 0)}
	reply6 := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeEchoReply, 0)}
	add(8, 200, pkt{src: "2001:db8:1::10", dst: "2001:4860:4860::8888", icmp6: echo6, payload: append([]byte{0, 9, 0, 1}, pad(32)...)}.bytes())
	add(8, 300, rawEther(0x88b5, 46)) // IEEE 802 local experimental ethertype
	add(9, 100, pkt{srcMAC: macGW, src: "2a00:1450:4001::200e", dst: "2001:db8:1::10", udp: udpDgram(443, 55000), payload: pad(1200)}.bytes())
	add(9, 200, pkt{srcMAC: macGW, src: "2001:4860:4860::8888", dst: "2001:db8:1::10", icmp6: reply6, payload: append([]byte{0, 9, 0, 1}, pad(32)...)}.bytes())
	add(9, 300, pkt{srcMAC: macGW, src: "203.0.113.5", dst: "198.51.100.7", tcp: tcpSeg(40000, 80), payload: pad(10)}.bytes())
	inner := serialize(&layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolNoNextHeader, SrcIP: []byte{10, 9, 0, 1}, DstIP: []byte{10, 9, 0, 2}})
	add(9, 400, pkt{src: "192.168.1.10", dst: "198.51.100.9", ipProto: layers.IPProtocolGRE, payload: append([]byte{0, 0, 0x08, 0x00}, inner...)}.bytes())
	sortFrames(fs)
	return fs
}

// dnsFrames: resolutions through a public resolver (8.8.8.8) and the
// LAN's (192.168.1.1): CNAME chains with A and AAAA, six A records for
// one name, NXDOMAIN, a reverse query, .local and dotless names, mixed
// case, two hostile names and a query over TCP; then HTTPS traffic to the
// resolved addresses.
func dnsFrames() []frame {
	var fs []frame
	ex := func(sec, ms int, server string, id uint16, qname string, qtype uint16, rcode uint16, answers ...dnsRR) {
		fs = append(fs, dnsExchange(nil, at(sec, ms), "192.168.1.10", server, id, qname, qtype, rcode, answers...)...)
	}
	const (
		pub = "8.8.8.8"
		lan = "192.168.1.1"
	)
	ex(0, 100, pub, 1, "www.example.com", 1, 0,
		dnsRR{name: "www.example.com", cname: "edge.example.net"},
		dnsRR{name: "edge.example.net", addr: "93.184.216.34"},
		dnsRR{name: "edge.example.net", addr: "93.184.216.35"})
	ex(0, 200, pub, 2, "www.example.com", 28, 0,
		dnsRR{name: "www.example.com", cname: "edge.example.net"},
		dnsRR{name: "edge.example.net", addr: "2606:2800:220:1:248:1893:25c8:1946"})
	ex(0, 300, pub, 3, "many.example.org", 1, 0,
		dnsRR{name: "many.example.org", addr: "198.51.100.1"},
		dnsRR{name: "many.example.org", addr: "198.51.100.2"},
		dnsRR{name: "many.example.org", addr: "198.51.100.3"},
		dnsRR{name: "many.example.org", addr: "198.51.100.4"},
		dnsRR{name: "many.example.org", addr: "198.51.100.5"},
		dnsRR{name: "many.example.org", addr: "198.51.100.6"})
	ex(1, 100, pub, 4, "nosuch.example.org", 1, 3)
	ex(1, 200, lan, 5, "34.216.184.93.in-addr.arpa", 12, 3)
	ex(1, 300, lan, 6, "printer.local", 1, 0, dnsRR{name: "printer.local", addr: "192.168.1.50"})
	ex(1, 400, lan, 7, "wpad", 1, 3)
	ex(2, 100, pub, 8, "MiXeD.Example.COM", 1, 0, dnsRR{name: "MiXeD.Example.COM", addr: "192.0.2.80"})
	ex(2, 200, pub, 9, "<img src=x onerror=alert(1)>.evil.test", 1, 0,
		dnsRR{name: "<img src=x onerror=alert(1)>.evil.test", addr: "203.0.113.66"})
	ex(2, 300, pub, 10, "\x1b[31mred\x00.evil.test", 1, 0,
		dnsRR{name: "\x1b[31mred\x00.evil.test", addr: "203.0.113.67"})
	// the same name asked again: two queries, two responses, no new address
	ex(3, 100, pub, 11, "www.example.com", 1, 0,
		dnsRR{name: "www.example.com", cname: "edge.example.net"},
		dnsRR{name: "edge.example.net", addr: "93.184.216.34"})
	// DNS over TCP: one whole message per segment, after its length prefix
	tcpq := dnsMsg(12, false, 0, "tcp.example.com", 1)
	tcpr := dnsMsg(12, true, 0, "tcp.example.com", 1, dnsRR{name: "tcp.example.com", addr: "192.0.2.53"})
	fs = append(fs,
		frame{ts: at(3, 200), data: pkt{src: "192.168.1.10", dst: pub, tcp: tcpSeg(41000, 53), payload: binary.BigEndian.AppendUint16(nil, uint16(len(tcpq)))}.bytes()}, // prefix alone: not parsed
		frame{ts: at(3, 210), data: pkt{src: "192.168.1.10", dst: pub, tcp: tcpSeg(41001, 53), payload: append(binary.BigEndian.AppendUint16(nil, uint16(len(tcpq))), tcpq...)}.bytes()},
		frame{ts: at(3, 230), data: pkt{srcMAC: macGW, src: pub, dst: "192.168.1.10", tcp: tcpSeg(53, 41001), payload: append(binary.BigEndian.AppendUint16(nil, uint16(len(tcpr))), tcpr...)}.bytes()},
	)
	for s := 4; s <= 5; s++ {
		fs = append(fs,
			frame{ts: at(s, 100), data: pkt{src: "192.168.1.10", dst: "93.184.216.34", tcp: tcpSeg(50000, 443), payload: pad(200)}.bytes()},
			frame{ts: at(s, 150), data: pkt{srcMAC: macGW, src: "93.184.216.34", dst: "192.168.1.10", tcp: tcpSeg(443, 50000), payload: pad(1400)}.bytes()},
			frame{ts: at(s, 200), data: pkt{src: "192.168.1.10", dst: "203.0.113.66", tcp: tcpSeg(50001, 443), payload: pad(100)}.bytes()},
			frame{ts: at(s, 300), data: pkt{src: "192.168.1.10", dst: "192.168.1.50", tcp: tcpSeg(50002, 631), payload: pad(100)}.bytes()},
		)
	}
	sortFrames(fs)
	return fs
}

// vlanFrames: 802.1Q-tagged TCP over IPv4 and IPv6, a QinQ (802.1ad)
// double-tagged DNS exchange and a tagged ARP request.
func vlanFrames() []frame {
	var fs []frame
	add := func(sec, ms int, p []byte) { fs = append(fs, frame{ts: at(sec, ms), data: p}) }
	v10 := []uint16{10}
	for i := 0; i < 3; i++ {
		add(0, 100+i*100, pkt{vlans: v10, src: "192.168.1.10", dst: "140.82.112.3", tcp: tcpSeg(50100, 443), payload: pad(50)}.bytes())
		add(0, 150+i*100, pkt{vlans: v10, srcMAC: macGW, src: "140.82.112.3", dst: "192.168.1.10", tcp: tcpSeg(443, 50100), payload: pad(400)}.bytes())
	}
	add(1, 100, pkt{vlans: v10, src: "2001:db8:1::10", dst: "2001:db8:2::99", tcp: tcpSeg(50200, 22), payload: pad(80)}.bytes())
	add(1, 200, arpFrame(v10, false, macOwn, "192.168.1.10", "192.168.1.1"))
	fs = append(fs, dnsExchange([]uint16{100, 20}, at(1, 300), "192.168.1.10", "9.9.9.9", 21, "vlan.example.com", 1, 0,
		dnsRR{name: "vlan.example.com", addr: "192.0.2.10"})...)
	sortFrames(fs)
	return fs
}

// corruptFrames: a runt, a bad IPv4 header length, a frame cut by the
// snap length inside its TCP header, an IPv6 packet longer than its frame,
// IPv4 fragments, an unknown ethertype, a cut VLAN tag and two broken DNS
// payloads (cut short; a compression loop), each followed by a good
// packet.
func corruptFrames() []frame {
	var fs []frame
	good := func(sec, ms int) {
		fs = append(fs, frame{ts: at(sec, ms), data: pkt{src: "192.168.1.10", dst: "93.184.216.34", tcp: tcpSeg(50000, 443), payload: pad(100)}.bytes()})
	}
	add := func(sec, ms int, p []byte, wire int) { fs = append(fs, frame{ts: at(sec, ms), data: p, wireLen: wire}) }

	add(0, 100, bytes.Clone(macGW[:])[:6], 0)
	fs[len(fs)-1].data = append(fs[len(fs)-1].data, 0, 0, 0, 0) // 10 bytes
	good(0, 110)
	badIHL := pkt{src: "192.168.1.10", dst: "93.184.216.34", tcp: tcpSeg(50000, 443), payload: pad(20)}.bytes()
	badIHL[14] = 0x44 // IHL 4: shorter than the fixed header
	add(0, 200, badIHL, 0)
	good(0, 210)
	cut := pkt{src: "192.168.1.10", dst: "93.184.216.34", tcp: tcpSeg(50000, 443), payload: pad(100)}.bytes()
	add(0, 300, cut[:44], len(cut)) // snap length 44: 10 bytes of TCP header
	good(0, 310)
	long6 := pkt{src: "2001:db8:1::10", dst: "2606:4700::1111", udp: udpDgram(50000, 443), payload: pad(40)}.bytes()
	binary.BigEndian.PutUint16(long6[18:], 400) // payload length 400, 48 present
	add(1, 100, long6, 0)
	good(1, 110)
	frag := func(ip *layers.IPv4) { ip.Id = 77; ip.Flags = layers.IPv4MoreFragments }
	add(1, 200, pkt{src: "192.168.1.10", dst: "8.8.4.4", udp: udpDgram(40100, 5000), payload: pad(64), ipv4: frag}.bytes(), 0)
	rest := func(ip *layers.IPv4) { ip.Id = 77; ip.FragOffset = 9; ip.Protocol = layers.IPProtocolUDP }
	add(1, 201, pkt{src: "192.168.1.10", dst: "8.8.4.4", ipProto: layers.IPProtocolUDP, payload: pad(30), ipv4: rest}.bytes(), 0)
	good(1, 210)
	add(2, 100, rawEther(0x1234, 50), 0)
	vlanCut := serialize(append(l2(macOwn, nil, layers.EthernetTypeDot1Q), gopacket.Payload([]byte{0x00, 0x0a}))...)
	add(2, 200, vlanCut[:16], 0) // half a VLAN tag
	good(2, 210)
	resp := dnsMsg(31, true, 0, "cut.example.com", 1, dnsRR{name: "cut.example.com", addr: "192.0.2.31"})
	add(3, 100, pkt{srcMAC: macGW, src: "8.8.8.8", dst: "192.168.1.10", udp: udpDgram(53, 40031), payload: resp[:len(resp)-3]}.bytes(), 0)
	loop := dnsMsg(32, false, 0, "loop.example.com", 1)
	loop = append(loop[:12], 0xc0, 12, 0, 1, 0, 1) // the question name points to itself
	add(3, 200, pkt{src: "192.168.1.10", dst: "8.8.8.8", udp: udpDgram(40032, 53), payload: loop}.bytes(), 0)
	good(3, 210)
	sortFrames(fs)
	return fs
}

// sll2Frames: Linux cooked capture v2 (what tcpdump -i any writes), with
// an IPv4 and an IPv6 packet each way.
func sll2Frames() []frame {
	sll2 := func(et layers.EthernetType, pktType byte, eth []byte) []byte {
		h := make([]byte, 20)
		binary.BigEndian.PutUint16(h[0:], uint16(et))
		binary.BigEndian.PutUint32(h[4:], 2) // interface index
		binary.BigEndian.PutUint16(h[8:], 1) // ARPHRD_ETHER
		h[10] = pktType                      // 0 to us, 4 outgoing
		h[11] = 6
		copy(h[12:], macOwn)
		return append(h, eth[14:]...) // the IP packet without its Ethernet header
	}
	out4 := pkt{src: "192.168.1.10", dst: "151.101.1.69", tcp: tcpSeg(50300, 443), payload: pad(120)}.bytes()
	in4 := pkt{srcMAC: macGW, src: "151.101.1.69", dst: "192.168.1.10", tcp: tcpSeg(443, 50300), payload: pad(900)}.bytes()
	out6 := pkt{src: "2001:db8:1::10", dst: "2a04:4e42::485", tcp: tcpSeg(50301, 443), payload: pad(120)}.bytes()
	in6 := pkt{srcMAC: macGW, src: "2a04:4e42::485", dst: "2001:db8:1::10", tcp: tcpSeg(443, 50301), payload: pad(900)}.bytes()
	return []frame{
		{ts: at(0, 100), data: sll2(layers.EthernetTypeIPv4, 4, out4)},
		{ts: at(0, 200), data: sll2(layers.EthernetTypeIPv4, 0, in4)},
		{ts: at(1, 100), data: sll2(layers.EthernetTypeIPv6, 4, out6)},
		{ts: at(1, 200), data: sll2(layers.EthernetTypeIPv6, 0, in6)},
	}
}

func sortFrames(fs []frame) {
	// stable: frames of the same instant keep their order
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].ts.Before(fs[j-1].ts); j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// encodeFixture writes frames as a capture file.
func encodeFixture(t testing.TB, fx fixture, frames []frame) []byte {
	t.Helper()
	var buf bytes.Buffer
	if fx.ng {
		intf := pcapgo.NgInterface{Name: "any", LinkType: fx.link, TimestampResolution: 9, SnapLength: 65535}
		w, err := pcapgo.NewNgWriterInterface(&buf, intf, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "netmon capture tests"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range frames {
			if err := w.WritePacket(f.ci(), f.data); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, fx.link); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := w.WritePacket(f.ci(), f.data); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestFixtures checks that every file of testdata/pcap is exactly what its
// generator writes, and rewrites them with -regen-pcap.
func TestFixtures(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			want := encodeFixture(t, fx, fx.frames())
			path := filepath.Join(pcapDir, fx.name)
			if *regenPcap {
				if err := os.MkdirAll(pcapDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./capture -run TestFixtures -regen-pcap)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from its generator; rerun with -regen-pcap if the change is intended", path)
			}
		})
	}
}
