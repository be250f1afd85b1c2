package sflow

import (
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"netmon/store/record"
)

// The input of the golden capture: testdata/flows/sflow/in.pcap is written
// by genFrames (see the README there), pmacctd reads it and sends sFlow,
// tcpdump records what arrives as sflow.pcap.

var regen = flag.Bool("regen-pcap", false, "rewrite testdata/flows/sflow/in.pcap from genFrames")

const (
	testdataDir = "../../../testdata/flows/sflow"
	inPcap      = "in.pcap"
	sflowPcap   = "sflow.pcap"
	// inFrames is how many frames genFrames writes.
	inFrames = 600
)

// fixtureBase is the first frame's time (2026-01-15 10:00 UTC), as in the
// other synthetic pcaps of testdata.
var fixtureBase = time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)

// genFrame is one frame of in.pcap and what a decoder should make of it.
type genFrame struct {
	data []byte
	want record.Flow // TS, Exporter, Packets left zero
}

// genFrames builds inFrames Ethernet frames, deterministic: IPv4 and IPv6,
// TCP, UDP and ICMP, untagged, 802.1Q and double-tagged (0x8100 twice: pmacctd 1.7.7 drops
// frames with an 802.1ad 0x88a8 outer tag, tested by hand instead), with
// frames from 54 to 1460 bytes, some longer than the 128 bytes of header
// pmacctd's sfprobe copies.
func genFrames() []genFrame {
	out := make([]genFrame, 0, inFrames)
	for i := range inFrames {
		v6 := i%3 == 2
		var src, dst netip.Addr
		if v6 {
			src = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 1, 14: byte(i >> 8), 15: byte(i)})
			dst = netip.MustParseAddr("2001:db8:ffff::53")
		} else {
			src = netip.AddrFrom4([4]byte{10, byte(i % 7), byte(i >> 8), byte(i)})
			dst = netip.AddrFrom4([4]byte{192, 0, 2, byte(1 + i%50)})
		}
		// Mostly short payloads keep in.pcap small; every tenth frame is
		// long, so frame lengths well past the 128 sampled bytes are seen.
		n := (i * 37) % 160
		if i%10 == 0 {
			n = 1000 + i%400
		}
		payload := make([]byte, n)
		for j := range payload {
			payload[j] = byte(i + j)
		}
		want := record.Flow{Src: src, Dst: dst}
		var l4 []gopacket.SerializableLayer
		switch i % 5 {
		case 0, 1, 2: // TCP
			tcp := &layers.TCP{SrcPort: layers.TCPPort(1024 + i), DstPort: 443, Seq: uint32(i), ACK: true, PSH: true, Window: 1024}
			want.Proto, want.SrcPort, want.DstPort = 6, uint16(1024+i), 443
			l4 = []gopacket.SerializableLayer{tcp, gopacket.Payload(payload)}
			withPseudoHeader(tcp, v6, src, dst)
		case 3: // UDP
			udp := &layers.UDP{SrcPort: layers.UDPPort(30000 + i), DstPort: 5001}
			want.Proto, want.SrcPort, want.DstPort = 17, uint16(30000+i), 5001
			l4 = []gopacket.SerializableLayer{udp, gopacket.Payload(payload)}
			withPseudoHeader(udp, v6, src, dst)
		default: // ICMP echo: no ports
			if v6 {
				ic := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(layers.ICMPv6TypeEchoRequest, 0)}
				ic.SetNetworkLayerForChecksum(ipLayer(v6, src, dst, 58))
				want.Proto = 58
				l4 = []gopacket.SerializableLayer{ic, gopacket.Payload(append([]byte{0, 1, 0, byte(i)}, payload...))}
			} else {
				want.Proto = 1
				l4 = []gopacket.SerializableLayer{
					&layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(layers.ICMPv4TypeEchoRequest, 0), Id: 1, Seq: uint16(i)},
					gopacket.Payload(payload),
				}
			}
		}
		proto := layers.IPProtocol(want.Proto)
		ip := ipLayer(v6, src, dst, proto)
		etIP := layers.EthernetTypeIPv4
		if v6 {
			etIP = layers.EthernetTypeIPv6
		}
		eth := &layers.Ethernet{
			SrcMAC: net.HardwareAddr{2, 0, 0, 0, byte(i >> 8), byte(i)},
			DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1},
		}
		ls := []gopacket.SerializableLayer{eth}
		switch i % 4 {
		case 1: // 802.1Q
			eth.EthernetType = layers.EthernetTypeDot1Q
			ls = append(ls, &layers.Dot1Q{VLANIdentifier: uint16(100 + i%10), Type: etIP})
		case 3: // double 802.1Q tag (pmacctd drops 0x88a8-tagged frames)
			eth.EthernetType = layers.EthernetTypeDot1Q
			ls = append(ls,
				&layers.Dot1Q{VLANIdentifier: 200, Type: layers.EthernetTypeDot1Q},
				&layers.Dot1Q{VLANIdentifier: uint16(10 + i%10), Type: etIP})
		default:
			eth.EthernetType = etIP
		}
		ls = append(ls, ip.(gopacket.SerializableLayer))
		ls = append(ls, l4...)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
			panic(fmt.Sprintf("frame %d: %v", i, err))
		}
		data := buf.Bytes()
		want.Octets = uint64(len(data))
		out = append(out, genFrame{data: data, want: want})
	}
	return out
}

// ipLayer is the IPv4 or IPv6 header of a generated frame.
func ipLayer(v6 bool, src, dst netip.Addr, proto layers.IPProtocol) gopacket.NetworkLayer {
	if v6 {
		return &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: proto, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
	}
	return &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
}

// withPseudoHeader gives a TCP or UDP layer its pseudo-header for the checksum.
func withPseudoHeader(l interface {
	SetNetworkLayerForChecksum(gopacket.NetworkLayer) error
}, v6 bool, src, dst netip.Addr) {
	var p layers.IPProtocol = layers.IPProtocolTCP
	if _, ok := l.(*layers.UDP); ok {
		p = layers.IPProtocolUDP
	}
	if err := l.SetNetworkLayerForChecksum(ipLayer(v6, src, dst, p)); err != nil {
		panic(err)
	}
}

// TestFixtures checks that in.pcap is what genFrames writes, or rewrites
// it with -regen-pcap.
func TestFixtures(t *testing.T) {
	frames := genFrames()
	path := filepath.Join(testdataDir, inPcap)
	if *regen {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := pcapgo.NewWriter(f)
		if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
			t.Fatal(err)
		}
		for i, fr := range frames {
			ci := gopacket.CaptureInfo{Timestamp: fixtureBase.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(fr.data), Length: len(fr.data)}
			if err := w.WritePacket(ci, fr.data); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	got := readPcapPayloads(t, path, false)
	if len(got) != len(frames) {
		t.Fatalf("%s: %d frames, genFrames makes %d (run with -regen-pcap)", path, len(got), len(frames))
	}
	for i := range frames {
		if string(got[i]) != string(frames[i].data) {
			t.Fatalf("%s: frame %d differs from genFrames (run with -regen-pcap)", path, i)
		}
	}
}

// readPcapPayloads returns the frames of a classic pcap, or with udp the
// UDP payloads of its frames (Ethernet or Linux cooked, as tcpdump -i lo
// writes Ethernet).
func readPcapPayloads(tb testing.TB, path string, udp bool) [][]byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	var out [][]byte
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if !udp {
			out = append(out, data)
			continue
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		if u, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP); ok {
			out = append(out, u.Payload)
		}
	}
	return out
}
