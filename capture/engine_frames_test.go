package capture

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Frame builders for the synthetic fixtures and the tests. Every frame is
// serialised by gopacket with lengths and checksums fixed, so tshark reads
// them as valid unless a fixture corrupts them on purpose.

var (
	macOwn   = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x10}
	macGW    = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01}
	macOther = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x30}
)

// testLocalNets are the capturing host's addresses in every fixture.
var testLocalNets = []netip.Prefix{
	netip.MustParsePrefix("192.168.1.10/24"),
	netip.MustParsePrefix("2001:db8:1::10/64"),
	netip.MustParsePrefix("fe80::10/64"),
}

// fixtureBase is the first second of every fixture (2026-01-15 10:00 UTC).
var fixtureBase = time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)

// frame is one captured frame.
type frame struct {
	ts      time.Time
	data    []byte
	wireLen int // length on the wire; 0 means len(data)
}

func (f frame) ci() gopacket.CaptureInfo {
	n := f.wireLen
	if n == 0 {
		n = len(f.data)
	}
	return gopacket.CaptureInfo{Timestamp: f.ts, CaptureLength: len(f.data), Length: n}
}

// at is the time sec seconds and ms milliseconds after fixtureBase.
func at(sec, ms int) time.Time {
	return fixtureBase.Add(time.Duration(sec)*time.Second + time.Duration(ms)*time.Millisecond)
}

// pkt describes an IP packet in an Ethernet frame.
type pkt struct {
	vlans    []uint16 // 802.1Q tags, outer first; with two the outer is QinQ (0x88a8)
	srcMAC   net.HardwareAddr
	src, dst string
	tcp      *layers.TCP
	udp      *layers.UDP
	icmp4    *layers.ICMPv4
	icmp6    *layers.ICMPv6
	ipProto  layers.IPProtocol // another protocol, with payload as its body
	payload  []byte
	ipv4     func(*layers.IPv4) // adjusts the IPv4 header (fragments)
}

func tcpSeg(sport, dport uint16) *layers.TCP {
	return &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: 1000, Ack: 1, ACK: true, PSH: true, Window: 64240}
}

func udpDgram(sport, dport uint16) *layers.UDP {
	return &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
}

func serialize(ls ...gopacket.SerializableLayer) []byte {
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		panic(err)
	}
	return bytes.Clone(buf.Bytes())
}

// l2 returns the Ethernet header and VLAN tags for a payload of type et.
func l2(src net.HardwareAddr, vlans []uint16, et layers.EthernetType) []gopacket.SerializableLayer {
	if src == nil {
		src = macOwn
	}
	dst := macGW
	if bytes.Equal(src, macGW) {
		dst = macOwn
	}
	eth := &layers.Ethernet{SrcMAC: src, DstMAC: dst, EthernetType: et}
	out := []gopacket.SerializableLayer{eth}
	next := &eth.EthernetType
	for i, v := range vlans {
		tagType := layers.EthernetTypeDot1Q
		if i == 0 && len(vlans) > 1 {
			tagType = layers.EthernetTypeQinQ
		}
		*next = tagType
		tag := &layers.Dot1Q{VLANIdentifier: v, Type: et}
		out = append(out, tag)
		next = &tag.Type
	}
	*next = et
	return out
}

func (p pkt) bytes() []byte {
	src, dst := netip.MustParseAddr(p.src), netip.MustParseAddr(p.dst)
	var ls []gopacket.SerializableLayer
	var netLayer gopacket.NetworkLayer
	if src.Is4() {
		proto := p.ipProto
		switch {
		case p.tcp != nil:
			proto = layers.IPProtocolTCP
		case p.udp != nil:
			proto = layers.IPProtocolUDP
		case p.icmp4 != nil:
			proto = layers.IPProtocolICMPv4
		}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
		if p.ipv4 != nil {
			p.ipv4(ip)
		}
		ls = append(l2(p.srcMAC, p.vlans, layers.EthernetTypeIPv4), ip)
		netLayer = ip
	} else {
		proto := p.ipProto
		switch {
		case p.tcp != nil:
			proto = layers.IPProtocolTCP
		case p.udp != nil:
			proto = layers.IPProtocolUDP
		case p.icmp6 != nil:
			proto = layers.IPProtocolICMPv6
		}
		ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: proto, SrcIP: src.AsSlice(), DstIP: dst.AsSlice()}
		ls = append(l2(p.srcMAC, p.vlans, layers.EthernetTypeIPv6), ip)
		netLayer = ip
	}
	switch {
	case p.tcp != nil:
		_ = p.tcp.SetNetworkLayerForChecksum(netLayer)
		ls = append(ls, p.tcp)
	case p.udp != nil:
		_ = p.udp.SetNetworkLayerForChecksum(netLayer)
		ls = append(ls, p.udp)
	case p.icmp4 != nil:
		ls = append(ls, p.icmp4)
	case p.icmp6 != nil:
		_ = p.icmp6.SetNetworkLayerForChecksum(netLayer)
		ls = append(ls, p.icmp6)
	}
	ls = append(ls, gopacket.Payload(p.payload))
	return serialize(ls...)
}

// arpFrame is an ARP request (reply=false) or reply between two IPv4
// addresses.
func arpFrame(vlans []uint16, reply bool, senderMAC net.HardwareAddr, sender, target string) []byte {
	op, targetMAC := uint16(layers.ARPRequest), net.HardwareAddr{0, 0, 0, 0, 0, 0}
	if reply {
		op, targetMAC = layers.ARPReply, macOwn
	}
	a := &layers.ARP{
		AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: op,
		SourceHwAddress: senderMAC, SourceProtAddress: netip.MustParseAddr(sender).AsSlice(),
		DstHwAddress: targetMAC, DstProtAddress: netip.MustParseAddr(target).AsSlice(),
	}
	return serialize(append(l2(senderMAC, vlans, layers.EthernetTypeARP), a)...)
}

// rawEther is an Ethernet frame of another ethertype with a zero body of
// n bytes.
func rawEther(et layers.EthernetType, n int) []byte {
	return serialize(append(l2(macOther, nil, et), gopacket.Payload(make([]byte, n)))...)
}

// pad returns n bytes of filler payload.
func pad(n int) []byte { return bytes.Repeat([]byte{'x'}, n) }

// dnsRR is an answer record for dnsMsg: an A or AAAA record (addr) or a
// CNAME (cname).
type dnsRR struct {
	name, addr, cname string
}

// dnsMsg builds a DNS message with one question and compresses names the
// way servers do: every name suffix already written is replaced by a
// pointer to it. qname is split on dots; a label may hold any other byte.
func dnsMsg(id uint16, response bool, rcode uint16, qname string, qtype uint16, answers ...dnsRR) []byte {
	var flags uint16 = 0x0100 // RD
	if response {
		flags |= 0x8080 | rcode // QR, RA
	}
	b := binary.BigEndian.AppendUint16(nil, id)
	b = binary.BigEndian.AppendUint16(b, flags)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = binary.BigEndian.AppendUint16(b, uint16(len(answers)))
	b = append(b, 0, 0, 0, 0)
	seen := map[string]int{}
	putName := func(name string) {
		labels := strings.Split(name, ".")
		for i := range labels {
			suffix := strings.ToLower(strings.Join(labels[i:], "."))
			if off, ok := seen[suffix]; ok {
				b = append(b, 0xc0|byte(off>>8), byte(off))
				return
			}
			if len(b) < 0x3fff {
				seen[suffix] = len(b)
			}
			b = append(b, byte(len(labels[i])))
			b = append(b, labels[i]...)
		}
		b = append(b, 0)
	}
	putName(qname)
	b = binary.BigEndian.AppendUint16(b, qtype)
	b = binary.BigEndian.AppendUint16(b, 1)
	for _, a := range answers {
		putName(a.name)
		var typ uint16
		var rdata []byte
		switch {
		case a.cname != "":
			typ = 5
		case strings.Contains(a.addr, ":"):
			typ, rdata = 28, netip.MustParseAddr(a.addr).AsSlice()
		default:
			typ, rdata = 1, netip.MustParseAddr(a.addr).AsSlice()
		}
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint16(b, 1)
		b = binary.BigEndian.AppendUint32(b, 300)
		if a.cname != "" {
			lenAt := len(b)
			b = append(b, 0, 0)
			putName(a.cname)
			binary.BigEndian.PutUint16(b[lenAt:], uint16(len(b)-lenAt-2))
			continue
		}
		b = binary.BigEndian.AppendUint16(b, uint16(len(rdata)))
		b = append(b, rdata...)
	}
	return b
}

// dnsExchange is a query from client to server and its response, as two
// UDP frames 20 ms apart.
func dnsExchange(vlans []uint16, ts time.Time, client, server string, id uint16, qname string, qtype uint16, rcode uint16, answers ...dnsRR) []frame {
	q := pkt{vlans: vlans, src: client, dst: server, udp: udpDgram(40000+id, 53), payload: dnsMsg(id, false, 0, qname, qtype)}
	r := pkt{vlans: vlans, srcMAC: macGW, src: server, dst: client, udp: udpDgram(53, 40000+id), payload: dnsMsg(id, true, rcode, qname, qtype, answers...)}
	return []frame{{ts: ts, data: q.bytes()}, {ts: ts.Add(20 * time.Millisecond), data: r.bytes()}}
}
