package attr

import (
	"encoding/binary"
	"net/netip"
)

// Link types of frames, as capture/source reports them (the LINKTYPE_
// numbers of libpcap; gopacket's layers.LinkType has the same values).
const (
	linkNull     = 0
	linkEthernet = 1
	linkRaw      = 101
	linkLoop     = 108
	linkSLL      = 113
	linkIPv4     = 228
	linkIPv6     = 229
)

// IP protocol numbers.
const (
	protoTCP = 6
	protoUDP = 17
)

// packet is what the backend needs of one frame. Payload is the captured
// part of the transport payload (it may be shorter than PayloadLen when
// the snaplen cut the frame).
type packet struct {
	Proto      uint8 // protoTCP, protoUDP, or another IP protocol
	Src, Dst   netip.AddrPort
	PayloadLen int    // transport payload bytes on the wire
	Payload    []byte // captured part of it
	Seq        uint32 // TCP sequence number
	SYN        bool
	// IPLen is the IP packet's length (for traffic that is not TCP/UDP).
	IPLen int
}

// parseFrame decodes the frame's IPv4 or IPv6 header and its TCP or UDP
// header. wireLen is the frame's length on the wire (before the snaplen).
// ok is false for frames that are not IP (ARP, LLDP ...) or too broken to
// read; a non-first IPv4 fragment gives Proto with zero ports.
func parseFrame(link int, frame []byte, wireLen int) (p packet, ok bool) {
	b := frame
	switch link {
	case linkEthernet:
		if len(b) < 14 {
			return p, false
		}
		et := binary.BigEndian.Uint16(b[12:])
		b = b[14:]
		for (et == 0x8100 || et == 0x88a8) && len(b) >= 4 {
			et, b = binary.BigEndian.Uint16(b[2:]), b[4:]
		}
		if et != 0x0800 && et != 0x86dd {
			return p, false
		}
	case linkSLL:
		if len(b) < 16 {
			return p, false
		}
		b = b[16:]
	case linkNull, linkLoop:
		if len(b) < 4 {
			return p, false
		}
		b = b[4:]
	case linkRaw, linkIPv4, linkIPv6:
	default:
		return p, false
	}
	hdr := len(frame) - len(b) // link-layer header length
	if len(b) < 1 {
		return p, false
	}
	var l4 []byte
	var l4Len int // transport segment length on the wire
	switch b[0] >> 4 {
	case 4:
		if len(b) < 20 {
			return p, false
		}
		ihl := int(b[0]&0x0f) * 4
		if ihl < 20 || len(b) < ihl {
			return p, false
		}
		total := int(binary.BigEndian.Uint16(b[2:]))
		if total == 0 { // a TSO/GRO super-frame can leave it 0
			total = wireLen - hdr
		}
		if total < ihl {
			return p, false
		}
		p.IPLen = total
		p.Proto = b[9]
		src, _ := netip.AddrFromSlice(b[12:16])
		dst, _ := netip.AddrFromSlice(b[16:20])
		p.Src, p.Dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
		if binary.BigEndian.Uint16(b[6:])&0x1fff != 0 {
			return p, true // a later fragment: no transport header
		}
		l4, l4Len = b[ihl:], total-ihl
	case 6:
		if len(b) < 40 {
			return p, false
		}
		plen := int(binary.BigEndian.Uint16(b[4:]))
		if plen == 0 { // jumbogram or BIG TCP super-frame
			plen = wireLen - hdr - 40
		}
		if plen < 0 {
			return p, false
		}
		p.IPLen = plen + 40
		p.Proto = b[6]
		p.Src = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])), 0)
		p.Dst = netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[24:40])), 0)
		// Extension headers are not walked: TCP and UDP follow the fixed
		// header in practice; anything else is counted as other traffic.
		l4, l4Len = b[40:], plen
	default:
		return p, false
	}
	switch p.Proto {
	case protoTCP:
		if len(l4) < 20 {
			return p, true
		}
		off := int(l4[12]>>4) * 4
		if off < 20 || l4Len < off {
			return p, true
		}
		p.Src = netip.AddrPortFrom(p.Src.Addr(), binary.BigEndian.Uint16(l4[0:]))
		p.Dst = netip.AddrPortFrom(p.Dst.Addr(), binary.BigEndian.Uint16(l4[2:]))
		p.Seq = binary.BigEndian.Uint32(l4[4:])
		p.SYN = l4[13]&0x02 != 0
		p.PayloadLen = l4Len - off
		if len(l4) > off {
			p.Payload = l4[off:min(len(l4), l4Len)]
		}
	case protoUDP:
		if len(l4) < 8 || l4Len < 8 {
			return p, true
		}
		p.Src = netip.AddrPortFrom(p.Src.Addr(), binary.BigEndian.Uint16(l4[0:]))
		p.Dst = netip.AddrPortFrom(p.Dst.Addr(), binary.BigEndian.Uint16(l4[2:]))
		p.PayloadLen = l4Len - 8
		p.Payload = l4[8:min(len(l4), l4Len)]
	}
	return p, true
}
