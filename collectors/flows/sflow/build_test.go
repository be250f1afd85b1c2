package sflow

import "encoding/binary"

// Builders of sFlow v5 datagrams and sampled frames for the hand-made
// tests, written from sflow_version_5.txt (XDR: big-endian 32-bit words,
// opaque data padded to 4 bytes). TestHostile cross-checks its plain rows
// with goflow2, so the builders cannot drift from the wire format.

// be appends big-endian 32-bit words.
func be(b []byte, vs ...uint32) []byte {
	for _, v := range vs {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// datagram is a v5 datagram with an IPv4 agent and count samples
// announced (count < 0 means len(samples)).
func datagram(count int, samples ...[]byte) []byte {
	if count < 0 {
		count = len(samples)
	}
	b := be(nil, 5, 1)
	b = append(b, 10, 0, 0, 1)
	b = be(b, 0, 42, 123456, uint32(count))
	for _, s := range samples {
		b = append(b, s...)
	}
	return b
}

// datagram6 is datagram with an IPv6 agent address.
func datagram6(samples ...[]byte) []byte {
	b := be(nil, 5, 2)
	b = append(b, []byte{0x20, 0x01, 0x0d, 0xb8, 15: 1}...)
	b = be(b, 0, 42, 123456, uint32(len(samples)))
	for _, s := range samples {
		b = append(b, s...)
	}
	return b
}

// sample frames a sample body with its format and length.
func sample(format uint32, body []byte) []byte {
	return append(be(nil, format, uint32(len(body))), body...)
}

// flowSampleN is a flow sample (0:1) announcing n records.
func flowSampleN(rate uint32, n uint32, records ...[]byte) []byte {
	b := be(nil, 7, 3, rate, 1000, 0, 1, 2, n)
	for _, r := range records {
		b = append(b, r...)
	}
	return sample(formatFlow, b)
}

// flowSample is a flow sample (0:1) holding records.
func flowSample(rate uint32, records ...[]byte) []byte {
	return flowSampleN(rate, uint32(len(records)), records...)
}

// expandedSample is an expanded flow sample (0:3) holding records.
func expandedSample(rate uint32, records ...[]byte) []byte {
	b := be(nil, 7, 0, 3, rate, 1000, 0, 0, 1, 0, 2, uint32(len(records)))
	for _, r := range records {
		b = append(b, r...)
	}
	return sample(formatExpandedFlow, b)
}

// counterSample is a counter sample of format 2 or 4 with one generic
// interface record's worth of zeros.
func counterSample(format uint32) []byte {
	b := be(nil, 9, 3)
	if format == formatExpandedCounter {
		b = be(nil, 9, 0, 3)
	}
	b = be(b, 1, 1, 88)
	b = append(b, make([]byte, 88)...)
	return sample(format, b)
}

// rawRecord is a raw packet header record (0:1), padded to 4 bytes.
func rawRecord(proto, frameLen uint32, hdr []byte) []byte {
	body := be(nil, proto, frameLen, 4, uint32(len(hdr)))
	body = append(body, hdr...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	return append(be(nil, recordRawHeader, uint32(len(body))), body...)
}

// switchRecord is an extended switch record (0:1001).
func switchRecord() []byte {
	return append(be(nil, 1001, 16), be(nil, 10, 0, 20, 0)...)
}

// eth is an Ethernet header with the given tag EtherTypes (each followed
// by a TCI of VLAN 7) before etype.
func eth(etype uint16, tags ...uint16) []byte {
	b := []byte{2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2}
	for _, t := range tags {
		b = binary.BigEndian.AppendUint16(b, t)
		b = binary.BigEndian.AppendUint16(b, 7)
	}
	return binary.BigEndian.AppendUint16(b, etype)
}

// ip4 is an IPv4 header 10.1.1.1 -> 10.2.2.2 with opts option bytes
// (a multiple of 4) and the fragment offset field frag.
func ip4(proto byte, frag uint16, opts int) []byte {
	b := []byte{0x45 + byte(opts/4), 0, 0, 0, 0, 0, byte(frag >> 8), byte(frag), 64, proto, 0, 0, 10, 1, 1, 1, 10, 2, 2, 2}
	return append(b, make([]byte, opts)...)
}

// ip6 is an IPv6 header 2001:db8::1 -> 2001:db8::2 with next header nh.
func ip6(nh byte) []byte {
	b := []byte{0x60, 0, 0, 0, 0, 0, nh, 64}
	b = append(b, []byte{0x20, 0x01, 0x0d, 0xb8, 15: 1}...)
	return append(b, []byte{0x20, 0x01, 0x0d, 0xb8, 15: 2}...)
}

// ports is the first 4 bytes of a TCP or UDP header plus pad bytes.
func ports(src, dst uint16, pad int) []byte {
	b := binary.BigEndian.AppendUint16(nil, src)
	b = binary.BigEndian.AppendUint16(b, dst)
	return append(b, make([]byte, pad)...)
}

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
