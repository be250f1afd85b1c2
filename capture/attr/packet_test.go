package attr

import (
	"net"
	"net/netip"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// frame serializes an Ethernet frame with the given IP and transport
// layers and payload, with real lengths and checksums.
func frame(t testing.TB, ip gopacket.NetworkLayer, l4 gopacket.SerializableLayer, payload []byte) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	if _, v6 := ip.(*layers.IPv6); v6 {
		eth.EthernetType = layers.EthernetTypeIPv6
	}
	if s, ok := l4.(interface {
		SetNetworkLayerForChecksum(gopacket.NetworkLayer) error
	}); ok {
		if err := s.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
	}
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip.(gopacket.SerializableLayer), l4, gopacket.Payload(payload))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ip4(src, dst string, proto layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: net.ParseIP(src).To4(), DstIP: net.ParseIP(dst).To4()}
}

func tcp(sport, dport uint16, seq uint32, syn bool) *layers.TCP {
	return &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: seq, SYN: syn, ACK: !syn, Window: 1000}
}

func udp(sport, dport uint16) *layers.UDP {
	return &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
}

func TestParseFrame(t *testing.T) {
	body := make([]byte, 1000)
	v6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolUDP, SrcIP: net.ParseIP("2001:db8::1"), DstIP: net.ParseIP("2001:db8::2")}
	tcpFrame := frame(t, ip4("10.0.0.1", "10.0.0.2", layers.IPProtocolTCP), tcp(40000, 443, 7, false), body)
	for _, tc := range []struct {
		desc    string
		link    int
		frame   []byte
		wireLen int
		want    packet
		ok      bool
	}{
		{"ipv4 tcp", linkEthernet, tcpFrame, len(tcpFrame),
			packet{Proto: protoTCP, Src: netip.MustParseAddrPort("10.0.0.1:40000"), Dst: netip.MustParseAddrPort("10.0.0.2:443"), PayloadLen: 1000, Seq: 7, IPLen: 1040}, true},
		{"ipv4 tcp cut by the snaplen: payload length from the headers", linkEthernet, tcpFrame[:600], len(tcpFrame),
			packet{Proto: protoTCP, Src: netip.MustParseAddrPort("10.0.0.1:40000"), Dst: netip.MustParseAddrPort("10.0.0.2:443"), PayloadLen: 1000, Seq: 7, IPLen: 1040}, true},
		{"ipv6 udp", linkEthernet, frame(t, v6, udp(5353, 53), body[:30]), 0,
			packet{Proto: protoUDP, Src: netip.MustParseAddrPort("[2001:db8::1]:5353"), Dst: netip.MustParseAddrPort("[2001:db8::2]:53"), PayloadLen: 30, IPLen: 78}, true},
		{"raw ip link", linkRaw, tcpFrame[14:], len(tcpFrame) - 14,
			packet{Proto: protoTCP, Src: netip.MustParseAddrPort("10.0.0.1:40000"), Dst: netip.MustParseAddrPort("10.0.0.2:443"), PayloadLen: 1000, Seq: 7, IPLen: 1040}, true},
		{"arp", linkEthernet, append(append([]byte{}, tcpFrame[:12]...), 0x08, 0x06, 0, 1), 16, packet{}, false},
		{"short", linkEthernet, tcpFrame[:20], 20, packet{}, false},
		{"unknown link", 999, tcpFrame, len(tcpFrame), packet{}, false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got, ok := parseFrame(tc.link, tc.frame, tc.wireLen)
			if ok != tc.ok {
				t.Fatalf("ok %v", ok)
			}
			if len(got.Payload) > got.PayloadLen {
				t.Fatalf("payload %d > length %d", len(got.Payload), got.PayloadLen)
			}
			got.Payload = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseFrame(f *testing.F) {
	f.Add(frame(f, ip4("10.0.0.1", "10.0.0.2", layers.IPProtocolTCP), tcp(1, 2, 3, true), []byte("GET / HTTP/1.1\r\n")), 1000)
	f.Add(frame(f, ip4("10.0.0.1", "10.0.0.2", layers.IPProtocolUDP), udp(1, 53), []byte{1, 2, 3}), 0)
	f.Fuzz(func(t *testing.T, b []byte, wireLen int) {
		for _, link := range []int{linkEthernet, linkRaw, linkSLL, linkNull} {
			p, _ := parseFrame(link, b, wireLen)
			if len(p.Payload) > max(p.PayloadLen, 0) {
				t.Fatalf("payload %d > length %d", len(p.Payload), p.PayloadLen)
			}
		}
	})
}
