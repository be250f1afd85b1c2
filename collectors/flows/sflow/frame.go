package sflow

import (
	"encoding/binary"
	"net/netip"

	"netmon/store/record"
)

// Header protocols of the raw packet header record (sFlow v5,
// "header_protocol"): the sampled bytes start with an Ethernet frame or,
// from some routers, directly with the IP header.
const (
	headerEthernet = 1
	headerIPv4     = 11
	headerIPv6     = 12
)

// EtherTypes read in a sampled frame.
const (
	etherIPv4  = 0x0800
	etherIPv6  = 0x86dd
	etherDot1Q = 0x8100
	etherQinQ  = 0x88a8 // 802.1ad service tag
	ether9100  = 0x9100 // pre-standard QinQ, still sent by some switches
)

// maxTags bounds the VLAN tags skipped: QinQ has two, anything beyond four
// is not a frame worth decoding further.
const maxTags = 4

// maxExtHeaders bounds the IPv6 extension headers walked.
const maxExtHeaders = 8

// IP protocol numbers read below.
const (
	protoTCP     = 6
	protoUDP     = 17
	protoSCTP    = 132
	protoUDPLite = 136

	ip6HopByHop = 0
	ip6Routing  = 43
	ip6Fragment = 44
	ip6AH       = 51
	ip6DestOpts = 60
)

// parseHeader decodes the sampled bytes of a raw packet header record into
// f's addresses, protocol and ports. It returns false when the bytes hold
// no IP header (ARP, LLDP, an 802.3 length field, an unknown header
// protocol, a header cut before the IP addresses): such a sample is valid
// but yields no flow, as a flow row needs a source and a destination.
//
// What is decoded: Ethernet II with up to four 802.1Q / 802.1ad / 0x9100
// tags, IPv4 (options skipped by IHL) and IPv6 with the hop-by-hop,
// routing, fragment, destination options and AH extension headers; TCP,
// UDP, SCTP and UDP-Lite ports. Not decoded, on purpose: MPLS, GRE,
// VXLAN and other tunnels (the outer addresses are reported), ESP (no
// ports), ICMP type and code. A fragment other than the first has no
// ports (they are in the first fragment only); a header cut inside the
// transport header leaves the ports zero.
func parseHeader(h []byte, proto uint32, f *record.Flow) bool {
	var et uint16
	switch proto {
	case headerEthernet:
		if len(h) < 14 {
			return false // goflow2 #252: no room for the EtherType
		}
		et = binary.BigEndian.Uint16(h[12:])
		h = h[14:]
		for t := 0; t < maxTags && (et == etherDot1Q || et == etherQinQ || et == ether9100); t++ {
			if len(h) < 4 {
				return false // a tag with nothing after it
			}
			et = binary.BigEndian.Uint16(h[2:])
			h = h[4:]
		}
	case headerIPv4:
		et = etherIPv4
	case headerIPv6:
		et = etherIPv6
	default:
		return false
	}
	var l4 []byte
	var ok bool
	switch et {
	case etherIPv4:
		l4, ok = ipv4(h, f)
	case etherIPv6:
		l4, ok = ipv6(h, f)
	}
	if !ok {
		return false
	}
	switch f.Proto {
	case protoTCP, protoUDP, protoSCTP, protoUDPLite:
		// The four protocols start with the source and destination ports.
		if len(l4) >= 4 {
			f.SrcPort = binary.BigEndian.Uint16(l4)
			f.DstPort = binary.BigEndian.Uint16(l4[2:])
		}
	}
	return true
}

// ipv4 reads an IPv4 header into f and returns the transport header, nil
// for a non-first fragment or when it is not in the sampled bytes.
func ipv4(h []byte, f *record.Flow) ([]byte, bool) {
	if len(h) < 20 || h[0]>>4 != 4 {
		return nil, false
	}
	ihl := int(h[0]&0x0f) * 4
	if ihl < 20 {
		return nil, false
	}
	f.Src = netip.AddrFrom4([4]byte(h[12:16]))
	f.Dst = netip.AddrFrom4([4]byte(h[16:20]))
	f.Proto = h[9]
	if binary.BigEndian.Uint16(h[6:])&0x1fff != 0 || ihl > len(h) {
		return nil, true
	}
	return h[ihl:], true
}

// ipv6 reads an IPv6 header into f, walks the common extension headers so
// that Proto is the transport protocol, and returns the transport header
// (nil as for ipv4). When an extension header is cut by the end of the
// sampled bytes, Proto is the last next-header value read.
func ipv6(h []byte, f *record.Flow) ([]byte, bool) {
	if len(h) < 40 || h[0]>>4 != 6 {
		return nil, false
	}
	f.Src = netip.AddrFrom16([16]byte(h[8:24]))
	f.Dst = netip.AddrFrom16([16]byte(h[24:40]))
	nh := h[6]
	h = h[40:]
	for range maxExtHeaders {
		var n int
		switch nh {
		case ip6HopByHop, ip6Routing, ip6DestOpts:
			if len(h) < 2 {
				f.Proto = nh
				return nil, true
			}
			n = (int(h[1]) + 1) * 8
		case ip6Fragment:
			if len(h) < 8 {
				f.Proto = nh
				return nil, true
			}
			if binary.BigEndian.Uint16(h[2:])>>3 != 0 {
				f.Proto = h[0]
				return nil, true
			}
			n = 8
		case ip6AH:
			if len(h) < 2 {
				f.Proto = nh
				return nil, true
			}
			n = (int(h[1]) + 2) * 4
		default:
			f.Proto = nh
			return h, true
		}
		next := h[0]
		if n > len(h) {
			f.Proto = next
			return nil, true
		}
		nh = next
		h = h[n:]
	}
	f.Proto = nh
	return nil, true
}
