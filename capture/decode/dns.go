// Package decode holds pure parsers of application payloads seen by the
// capture: DNS (dns.go), the TLS ClientHello SNI (tls.go) and the HTTP/1.x
// Host (http.go), with a bounded reassembly of a stream's first bytes
// (prefix.go) for a ClientHello split over segments.
//
// It is a leaf: it imports only the standard library, keeps no state
// between calls (a StreamPrefix is state its caller owns) and never panics
// on hostile input. Every parser is fuzzed (see the Fuzz targets beside
// each file).
//
// The parsers do not escape text: a DNS label may carry any byte (control
// bytes, '<', '.', invalid UTF-8) and is returned exactly as sent, apart
// from ASCII case folding. SNI and Host names are refused unless they are
// printable ASCII, but may still hold '<' or quotes. Whoever renders a
// name (JSON, HTML, CSV) escapes it there.
package decode

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// Limits of ParseDNS. Records beyond them are ignored, never an error, so a
// hostile count cannot make the parser allocate or loop without bound.
const (
	// MaxQuestions is the number of questions ParseDNS keeps. A message
	// with more is parsed up to there and its answers are not read.
	MaxQuestions = 8
	// MaxAnswers is the number of answer records ParseDNS reads (of any
	// type; only A, AAAA and CNAME are kept).
	MaxAnswers = 32
	// MaxNameWire is the longest name on the wire, length bytes and the
	// final root label included (RFC 1035 section 3.1).
	MaxNameWire = 255
	// MaxLabel is the longest label (RFC 1035 section 2.3.4).
	MaxLabel = 63
	// MaxPointers is the number of compression pointers followed while
	// reading one name; more is treated as a loop.
	MaxPointers = 16

	headerLen = 12
	// nameBufCap holds every name a message can yield: each question, each
	// answer's owner and a CNAME target per answer, at most 254 text bytes
	// each. Allocated once per DNSMessage, so names never move.
	nameBufCap = (MaxQuestions + 2*MaxAnswers) * (MaxNameWire - 1)
)

// DNS record types ParseDNS understands.
const (
	TypeA     uint16 = 1
	TypeCNAME uint16 = 5
	TypeAAAA  uint16 = 28
)

// Errors returned by ParseDNS. They are sentinels so a caller can count
// them by kind without allocating.
var (
	ErrShort          = errors.New("dns: message shorter than its header")
	ErrTruncated      = errors.New("dns: message ends inside a record")
	ErrBadLabel       = errors.New("dns: label longer than 63 bytes or of a reserved type")
	ErrNameTooLong    = errors.New("dns: name longer than 255 bytes")
	ErrPointerLoop    = errors.New("dns: too many compression pointers")
	ErrPointerRange   = errors.New("dns: compression pointer out of range")
	ErrBadRDataLength = errors.New("dns: record data length does not fit its type")
)

// DNSMessage is the part of a DNS message (RFC 1035) that traffic
// statistics need: the header, the questions and the A, AAAA and CNAME
// answers. Authority and additional sections are not read.
//
// A DNSMessage is meant to be reused: ParseDNS overwrites it and reuses its
// slices, so parsing allocates only on the first use of a value. The name
// slices point into storage owned by the message and stay valid until the
// next ParseDNS call with the same message.
type DNSMessage struct {
	ID        uint16
	Response  bool  // QR bit: false for a query, true for a response
	Opcode    uint8 // 0 for a standard query
	Truncated bool  // TC bit
	RCode     uint8 // 0 NOERROR, 3 NXDOMAIN, ...

	// Counts as announced in the header; Questions and Answers hold at
	// most MaxQuestions and the kept ones among MaxAnswers records.
	QDCount, ANCount, NSCount, ARCount uint16

	Questions []DNSQuestion
	Answers   []DNSAnswer

	names []byte // backing store of every Name and Target; cap nameBufCap
}

// DNSQuestion is one entry of the question section.
type DNSQuestion struct {
	Name  []byte // lower-cased, no trailing dot; "" is the root
	Type  uint16
	Class uint16
}

// DNSAnswer is an A, AAAA or CNAME record of the answer section.
type DNSAnswer struct {
	Name   []byte // owner name, lower-cased, no trailing dot
	Type   uint16 // TypeA, TypeAAAA or TypeCNAME
	Class  uint16
	TTL    uint32
	Addr   netip.Addr // the address of an A or AAAA record
	Target []byte     // the canonical name of a CNAME record
}

// ParseDNS parses the DNS message in payload (a UDP payload, or a TCP one
// without its two-byte length prefix) into out.
//
// Names are decompressed (RFC 1035 section 4.1.4) with at most MaxPointers
// jumps, labels longer than 63 bytes, names longer than 255 bytes and
// pointers outside the message are errors. Only ASCII letters are folded to
// lower case; every other byte is kept as is. Questions beyond MaxQuestions
// and records beyond MaxAnswers are ignored. On error the content of out is
// unspecified; ParseDNS never panics and never keeps a reference to
// payload.
func ParseDNS(payload []byte, out *DNSMessage) error {
	if cap(out.names) < nameBufCap {
		out.names = make([]byte, 0, nameBufCap)
		out.Questions = make([]DNSQuestion, 0, MaxQuestions)
		out.Answers = make([]DNSAnswer, 0, MaxAnswers)
	}
	out.names = out.names[:0]
	out.Questions = out.Questions[:0]
	out.Answers = out.Answers[:0]

	if len(payload) < headerLen {
		return ErrShort
	}
	flags := binary.BigEndian.Uint16(payload[2:])
	out.ID = binary.BigEndian.Uint16(payload[0:])
	out.Response = flags&0x8000 != 0
	out.Opcode = uint8(flags>>11) & 0x0f
	out.Truncated = flags&0x0200 != 0
	out.RCode = uint8(flags & 0x000f)
	out.QDCount = binary.BigEndian.Uint16(payload[4:])
	out.ANCount = binary.BigEndian.Uint16(payload[6:])
	out.NSCount = binary.BigEndian.Uint16(payload[8:])
	out.ARCount = binary.BigEndian.Uint16(payload[10:])

	off := headerLen
	for i := 0; i < int(out.QDCount); i++ {
		if i == MaxQuestions {
			// The answers start after questions we do not read.
			return nil
		}
		name, next, err := out.readName(payload, off)
		if err != nil {
			return err
		}
		if next+4 > len(payload) {
			return ErrTruncated
		}
		out.Questions = append(out.Questions, DNSQuestion{
			Name:  name,
			Type:  binary.BigEndian.Uint16(payload[next:]),
			Class: binary.BigEndian.Uint16(payload[next+2:]),
		})
		off = next + 4
	}

	for i := 0; i < int(out.ANCount) && i < MaxAnswers; i++ {
		name, next, err := out.readName(payload, off)
		if err != nil {
			return err
		}
		if next+10 > len(payload) {
			return ErrTruncated
		}
		typ := binary.BigEndian.Uint16(payload[next:])
		class := binary.BigEndian.Uint16(payload[next+2:])
		ttl := binary.BigEndian.Uint32(payload[next+4:])
		rdlen := int(binary.BigEndian.Uint16(payload[next+8:]))
		rdata := next + 10
		end := rdata + rdlen
		if end > len(payload) {
			return ErrTruncated
		}
		ans := DNSAnswer{Name: name, Type: typ, Class: class, TTL: ttl}
		mark := len(out.names) - len(name) // drop the owner of a skipped record
		switch typ {
		case TypeA:
			if rdlen != 4 {
				return ErrBadRDataLength
			}
			ans.Addr = netip.AddrFrom4([4]byte(payload[rdata:end]))
		case TypeAAAA:
			if rdlen != 16 {
				return ErrBadRDataLength
			}
			ans.Addr = netip.AddrFrom16([16]byte(payload[rdata:end]))
		case TypeCNAME:
			target, tnext, err := out.readName(payload, rdata)
			if err != nil {
				return err
			}
			if tnext != end {
				return ErrBadRDataLength
			}
			ans.Target = target
		default:
			out.names = out.names[:mark]
			off = end
			continue
		}
		out.Answers = append(out.Answers, ans)
		off = end
	}
	return nil
}

// readName reads the possibly compressed name at off, appends its text
// form to m.names and returns it with the offset just past the name where
// it started (past its first pointer, if any).
func (m *DNSMessage) readName(msg []byte, off int) (name []byte, next int, err error) {
	start := len(m.names)
	wire := 0 // wire length of the labels read so far
	jumps := 0
	next = -1
	p := off
	for {
		if p >= len(msg) {
			return nil, 0, ErrTruncated
		}
		c := int(msg[p])
		switch c & 0xc0 {
		case 0x00:
			if c == 0 {
				if next < 0 {
					next = p + 1
				}
				return m.names[start:len(m.names):len(m.names)], next, nil
			}
			p++
			if p+c > len(msg) {
				return nil, 0, ErrTruncated
			}
			wire += c + 1
			if wire+1 > MaxNameWire { // +1: the root label still to come
				return nil, 0, ErrNameTooLong
			}
			if len(m.names) > start {
				m.names = append(m.names, '.')
			}
			at := len(m.names)
			m.names = append(m.names, msg[p:p+c]...)
			label := m.names[at:]
			for i, b := range label {
				if 'A' <= b && b <= 'Z' {
					label[i] = b + 'a' - 'A'
				}
			}
			p += c
		case 0xc0:
			if p+1 >= len(msg) {
				return nil, 0, ErrTruncated
			}
			if next < 0 {
				next = p + 2
			}
			jumps++
			if jumps > MaxPointers {
				return nil, 0, ErrPointerLoop
			}
			ptr := (c&0x3f)<<8 | int(msg[p+1])
			if ptr < headerLen || ptr >= len(msg) {
				return nil, 0, ErrPointerRange
			}
			p = ptr
		default: // 0x40 (extended label, RFC 6891) and 0x80: reserved
			return nil, 0, ErrBadLabel
		}
	}
}

// IsReverse reports whether name (lower-case, no trailing dot, as ParseDNS
// returns it) is a reverse-mapping name under in-addr.arpa or ip6.arpa.
func IsReverse[T ~string | ~[]byte](name T) bool {
	return hasLabelSuffix(name, "in-addr.arpa") || hasLabelSuffix(name, "ip6.arpa")
}

// IsLocal reports whether name is the multicast-DNS domain "local" or a
// name under it (RFC 6762).
func IsLocal[T ~string | ~[]byte](name T) bool {
	return hasLabelSuffix(name, "local")
}

// hasLabelSuffix reports whether name equals suffix or ends with
// "."+suffix. Both are expected in lower case.
func hasLabelSuffix[T ~string | ~[]byte](name T, suffix string) bool {
	n, s := len(name), len(suffix)
	if n < s {
		return false
	}
	for i := 0; i < s; i++ {
		if name[n-s+i] != suffix[i] {
			return false
		}
	}
	return n == s || name[n-s-1] == '.'
}

// IsReportable reports whether a query name (lower-case, no trailing dot,
// as ParseDNS returns it) is one the agent reports (spec 1, "DNS names
// exclude reverse lookups, .local and dotless names"): a name with at
// least one dot that is neither a reverse-mapping name (IsReverse) nor
// under .local (IsLocal). The root name "" is dotless.
func IsReportable[T ~string | ~[]byte](name T) bool {
	dot := false
	for i := 0; i < len(name); i++ {
		if name[i] == '.' {
			dot = true
			break
		}
	}
	return dot && !IsReverse(name) && !IsLocal(name)
}
