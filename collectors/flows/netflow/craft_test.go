package netflow

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"netmon/store/record"
)

// Builders of hand-made datagrams, for the cases softflowd never sends.

var (
	exporterA = netip.MustParseAddr("192.0.2.1")
	exporterB = netip.MustParseAddr("192.0.2.2")
	// craftExport is the export time of crafted datagrams; craftNow
	// the receive time handed to Decode, one second later.
	craftExport = uint32(1768471205)
	craftNow    = time.Unix(int64(craftExport)+1, 0)
)

func put16(b []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(b, v) }
func put32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }

// set wraps a body in a set header whose length is computed.
func set(id uint16, body ...[]byte) []byte {
	n := setHeaderLength
	for _, b := range body {
		n += len(b)
	}
	out := put16(put16(nil, id), uint16(n))
	for _, b := range body {
		out = append(out, b...)
	}
	return out
}

// rawSet is a set header with any length, for broken lengths.
func rawSet(id, length uint16, body []byte) []byte {
	return append(put16(put16(nil, id), length), body...)
}

// tmpl is a template record; fields of an IPFIX enterprise element
// (Type with the top bit) carry their PEN.
func tmpl(id uint16, fs ...Field) []byte {
	b := put16(put16(nil, id), uint16(len(fs)))
	for _, f := range fs {
		b = put16(put16(b, f.Type), f.Length)
		if f.Type&0x8000 != 0 {
			b = put32(b, f.Enterprise)
		}
	}
	return b
}

// v9Msg builds a NetFlow v9 datagram: uptime 10 000 ms at craftExport.
func v9Msg(domain uint32, sets ...[]byte) []byte {
	b := put16(nil, 9)
	b = put16(b, uint16(len(sets)))
	b = put32(b, 10000)
	b = put32(b, craftExport)
	b = put32(b, 1)
	b = put32(b, domain)
	for _, s := range sets {
		b = append(b, s...)
	}
	return b
}

// ipfixMsg builds an IPFIX message exported at craftExport.
func ipfixMsg(domain uint32, sets ...[]byte) []byte {
	b := put16(nil, 10)
	b = put16(b, 0) // length, below
	b = put32(b, craftExport)
	b = put32(b, 1)
	b = put32(b, domain)
	for _, s := range sets {
		b = append(b, s...)
	}
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}

// basicFields is a small IPv4 template: addresses, ports, proto,
// 4-byte counters and LAST_SWITCHED (21). Records: 29 bytes.
var basicFields = []Field{
	{Type: 8, Length: 4}, {Type: 12, Length: 4}, {Type: 7, Length: 2}, {Type: 11, Length: 2},
	{Type: 4, Length: 1}, {Type: 2, Length: 4}, {Type: 1, Length: 4}, {Type: 21, Length: 4}, {Type: 22, Length: 4},
}

// basicRecord is one record of basicFields; i varies addresses, ports
// and counters. last is LAST_SWITCHED in ms of uptime.
func basicRecord(i int, last uint32) []byte {
	b := []byte{10, 1, byte(i >> 8), byte(i), 198, 51, 100, byte(i)}
	b = put16(b, uint16(1000+i))
	b = put16(b, 443)
	b = append(b, 6)
	b = put32(b, uint32(i+1))
	b = put32(b, uint32(100*(i+1)))
	b = put32(b, last)
	b = put32(b, last-5)
	return b
}

// basicFlow is what basicRecord(i, last) decodes to from v9Msg.
func basicFlow(exporter netip.Addr, i int, last uint32) record.Flow {
	return record.Flow{
		TS: uptimeTS(int64(craftExport)*1000, 10000, last), Exporter: exporter,
		Src: netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), Dst: netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}),
		SrcPort: uint16(1000 + i), DstPort: 443, Proto: 6, Packets: uint64(i + 1), Octets: uint64(100 * (i + 1)),
	}
}

// mustDecode decodes and fails the test on error.
func mustDecode(t testing.TB, d *Decoder, data []byte, from netip.Addr) ([]record.Flow, Result) {
	t.Helper()
	fs, res, err := d.Decode(data, from, craftNow, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return fs, res
}
