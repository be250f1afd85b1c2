package decode

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// dnsPayloads extracts the UDP port-53 payloads of the classic-pcap
// Ethernet fixtures in testdata/pcap (real DNS messages as tshark decodes
// them, plus the broken ones of corrupt.pcap). A few lines of standard
// library instead of gopacket keep this leaf's tests free of
// dependencies.
func dnsPayloads(t testing.TB) [][]byte {
	t.Helper()
	files, err := filepath.Glob("../../testdata/pcap/*.pcap")
	if err != nil || len(files) == 0 {
		t.Fatalf("no pcap fixtures: %v", err)
	}
	var out [][]byte
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) < 24 || binary.LittleEndian.Uint32(raw) != 0xa1b2c3d4 || binary.LittleEndian.Uint32(raw[20:]) != 1 {
			continue // not a little-endian microsecond Ethernet pcap
		}
		for off := 24; off+16 <= len(raw); {
			n := int(binary.LittleEndian.Uint32(raw[off+8:]))
			if off+16+n > len(raw) {
				break
			}
			if p := udp53(raw[off+16 : off+16+n]); p != nil {
				out = append(out, p)
			}
			off += 16 + n
		}
	}
	return out
}

// udp53 returns the payload of a UDP datagram from or to port 53 in an
// Ethernet frame (VLAN tags skipped), or nil.
func udp53(f []byte) []byte {
	if len(f) < 14 {
		return nil
	}
	et, p := binary.BigEndian.Uint16(f[12:]), f[14:]
	for (et == 0x8100 || et == 0x88a8) && len(p) >= 4 {
		et, p = binary.BigEndian.Uint16(p[2:]), p[4:]
	}
	var proto byte
	switch {
	case et == 0x0800 && len(p) >= 20:
		ihl := int(p[0]&0x0f) * 4
		if ihl < 20 || len(p) < ihl || binary.BigEndian.Uint16(p[6:])&0x3fff != 0 {
			return nil // bad header or a fragment
		}
		proto, p = p[9], p[ihl:]
	case et == 0x86dd && len(p) >= 40:
		proto, p = p[6], p[40:]
	default:
		return nil
	}
	if proto != 17 || len(p) < 8 {
		return nil
	}
	if binary.BigEndian.Uint16(p[0:]) != 53 && binary.BigEndian.Uint16(p[2:]) != 53 {
		return nil
	}
	return p[8:]
}

func TestFixturePayloads(t *testing.T) {
	ok, bad := 0, 0
	var m DNSMessage
	for _, p := range dnsPayloads(t) {
		if ParseDNS(p, &m) == nil {
			ok++
		} else {
			bad++
		}
	}
	// dns.pcap: 22 UDP messages, vlan.pcap: 2, corrupt.pcap: 2 broken ones
	if ok != 24 || bad != 2 {
		t.Errorf("fixtures: %d messages parsed, %d rejected; want 24 and 2", ok, bad)
	}
}

// FuzzParseDNS: no panic, bounded output, names within the limits.
func FuzzParseDNS(f *testing.F) {
	for _, p := range dnsPayloads(f) {
		f.Add(p)
	}
	f.Add(sampleResponse())
	f.Add([]byte{})
	f.Add(cat(hdr(1, 0, 1, 0, 0, 0), ptrTo(12), []byte{0, 1, 0, 1}))
	var m DNSMessage
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := ParseDNS(data, &m); err != nil {
			return
		}
		if len(m.Questions) > MaxQuestions || len(m.Answers) > MaxAnswers {
			t.Fatalf("%d questions, %d answers", len(m.Questions), len(m.Answers))
		}
		check := func(name []byte) {
			if len(name) > MaxNameWire-2 {
				t.Fatalf("name of %d bytes", len(name))
			}
			for _, b := range name {
				if 'A' <= b && b <= 'Z' {
					t.Fatalf("upper case in %q", name)
				}
			}
		}
		for _, q := range m.Questions {
			check(q.Name)
		}
		for _, a := range m.Answers {
			check(a.Name)
			check(a.Target)
			switch a.Type {
			case TypeA:
				if !a.Addr.Is4() {
					t.Fatalf("A record with %v", a.Addr)
				}
			case TypeAAAA:
				if !a.Addr.Is6() {
					t.Fatalf("AAAA record with %v", a.Addr)
				}
			case TypeCNAME:
			default:
				t.Fatalf("kept a record of type %d", a.Type)
			}
		}
	})
}

func BenchmarkParseDNS(b *testing.B) {
	msg := sampleResponse()
	var m DNSMessage
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for i := 0; i < b.N; i++ {
		if err := ParseDNS(msg, &m); err != nil {
			b.Fatal(err)
		}
	}
}
