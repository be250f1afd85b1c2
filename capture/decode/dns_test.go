package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The helpers below build DNS messages byte by byte, so each test states
// exactly what is on the wire.

func hdr(id, flags, qd, an, ns, ar uint16) []byte {
	b := make([]byte, 12)
	binary.BigEndian.PutUint16(b[0:], id)
	binary.BigEndian.PutUint16(b[2:], flags)
	binary.BigEndian.PutUint16(b[4:], qd)
	binary.BigEndian.PutUint16(b[6:], an)
	binary.BigEndian.PutUint16(b[8:], ns)
	binary.BigEndian.PutUint16(b[10:], ar)
	return b
}

// wname encodes labels uncompressed, with the root label.
func wname(labels ...string) []byte {
	var b []byte
	for _, l := range labels {
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	return append(b, 0)
}

// labelsThenPtr encodes labels followed by a compression pointer.
func labelsThenPtr(ptr int, labels ...string) []byte {
	b := wname(labels...)
	b = b[:len(b)-1]
	return append(b, 0xc0|byte(ptr>>8), byte(ptr))
}

func ptrTo(off int) []byte { return []byte{0xc0 | byte(off>>8), byte(off)} }

func q(name []byte, typ uint16) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(bytes.Clone(name), typ), 1)
}

func rr(name []byte, typ uint16, ttl uint32, rdata []byte) []byte {
	b := bytes.Clone(name)
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = binary.BigEndian.AppendUint32(b, ttl)
	b = binary.BigEndian.AppendUint16(b, uint16(len(rdata)))
	return append(b, rdata...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// sampleResponse is www.Example.COM -> CNAME edge.example.net -> A, AAAA,
// with the owner names and the CNAME target compressed.
func sampleResponse() []byte {
	// offsets: header 0-11, question name at 12 (17 bytes: 3www7example3com0)
	qname := wname("www", "Example", "COM")
	question := q(qname, TypeA)                  // 12 .. 12+17+4 = 33
	cname := labelsThenPtr(12+4, "edge")         // "edge" + ptr to "example.com" at 16
	ans1 := rr(ptrTo(12), TypeCNAME, 300, cname) // owner at 33, rdata at 33+2+10 = 45
	ans2 := rr(ptrTo(45), TypeA, 60, []byte{93, 184, 216, 34})
	ans3 := rr(ptrTo(45), TypeAAAA, 60, netip.MustParseAddr("2606:2800:220:1::1").AsSlice())
	return cat(hdr(0xbeef, 0x8180, 1, 3, 0, 0), question, ans1, ans2, ans3)
}

type parsed struct {
	ID        uint16
	Response  bool
	RCode     uint8
	Questions []string
	Answers   []string
}

func summarize(m *DNSMessage) parsed {
	p := parsed{ID: m.ID, Response: m.Response, RCode: m.RCode}
	for _, q := range m.Questions {
		p.Questions = append(p.Questions, string(q.Name)+"/"+itoa(int(q.Type)))
	}
	for _, a := range m.Answers {
		s := string(a.Name) + " " + itoa(int(a.Type)) + " "
		if a.Type == TypeCNAME {
			s += string(a.Target)
		} else {
			s += a.Addr.String()
		}
		p.Answers = append(p.Answers, s)
	}
	return p
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}

func TestParseDNS(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	// 3 labels of 63 plus one of 61: wire 64*3 + 62 + 1 = 255, the maximum.
	max255 := wname(long63, long63, long63, strings.Repeat("b", 61))
	over255 := wname(long63, long63, long63, strings.Repeat("b", 62))
	manyAnswers := hdr(1, 0x8180, 1, 40, 0, 0)
	manyAnswers = append(manyAnswers, q(wname("many", "test"), TypeA)...)
	for i := 0; i < 40; i++ {
		manyAnswers = append(manyAnswers, rr(ptrTo(12), TypeA, 1, []byte{10, 0, 0, byte(i)})...)
	}
	manyQuestions := hdr(2, 0x0100, 9, 1, 0, 0)
	for i := 0; i < 9; i++ {
		manyQuestions = append(manyQuestions, q(wname("q"+itoa(i), "test"), TypeA)...)
	}
	// chain(n) is a question whose name is reached through n pointers:
	// the question (at 12) points to the last of n-1 chained pointers
	// placed after "end.test" (at 18), the first of which points to it.
	chain := func(n int) []byte {
		b := cat(hdr(3, 0x0100, 1, 0, 0, 0), []byte{0, 0, 0, 1, 0, 1}, wname("end", "test"))
		prev := 18
		for i := 0; i < n-1; i++ {
			at := len(b)
			b = append(b, ptrTo(prev)...)
			prev = at
		}
		copy(b[12:], ptrTo(prev))
		return b
	}
	shortCNAME := rr(ptrTo(12), TypeCNAME, 1, wname("c", "d"))
	binary.BigEndian.PutUint16(shortCNAME[10:], 2) // rdlength 2, the name takes 5

	tests := []struct {
		desc string
		in   []byte
		want parsed
		err  error
	}{
		{
			desc: "query, case folded",
			in:   cat(hdr(0x1234, 0x0100, 1, 0, 0, 0), q(wname("www", "Example", "COM"), TypeAAAA)),
			want: parsed{ID: 0x1234, Questions: []string{"www.example.com/28"}},
		},
		{
			desc: "response with compressed CNAME chain, A and AAAA",
			in:   sampleResponse(),
			want: parsed{ID: 0xbeef, Response: true, Questions: []string{"www.example.com/1"}, Answers: []string{
				"www.example.com 5 edge.example.com",
				"edge.example.com 1 93.184.216.34",
				"edge.example.com 28 2606:2800:220:1::1",
			}},
		},
		{
			desc: "NXDOMAIN, no answers",
			in:   cat(hdr(7, 0x8183, 1, 0, 0, 0), q(wname("nope", "test"), TypeA)),
			want: parsed{ID: 7, Response: true, RCode: 3, Questions: []string{"nope.test/1"}},
		},
		{
			desc: "root name",
			in:   cat(hdr(8, 0x0100, 1, 0, 0, 0), q(wname(), 2)),
			want: parsed{ID: 8, Questions: []string{"/2"}},
		},
		{
			desc: "other record types are skipped",
			in: cat(hdr(9, 0x8180, 1, 2, 0, 0), q(wname("mx", "test"), 15),
				rr(ptrTo(12), 15, 1, cat([]byte{0, 10}, wname("mail", "test"))),
				rr(ptrTo(12), TypeA, 1, []byte{192, 0, 2, 1})),
			want: parsed{ID: 9, Response: true, Questions: []string{"mx.test/15"}, Answers: []string{"mx.test 1 192.0.2.1"}},
		},
		{
			desc: "hostile bytes are kept as sent",
			in:   cat(hdr(10, 0x0100, 1, 0, 0, 0), q(wname("<IMG src=x onerror=alert(1)>", "\x01\x7f\xc4", "evil", "test"), TypeA)),
			want: parsed{ID: 10, Questions: []string{"<img src=x onerror=alert(1)>.\x01\x7f\xc4.evil.test/1"}},
		},
		{
			desc: "name of exactly 255 bytes",
			in:   cat(hdr(11, 0x0100, 1, 0, 0, 0), q(max255, TypeA)),
			want: parsed{ID: 11, Questions: []string{long63 + "." + long63 + "." + long63 + "." + strings.Repeat("b", 61) + "/1"}},
		},
		{
			desc: "only 32 answers are read",
			in:   manyAnswers,
			want: func() parsed {
				p := parsed{ID: 1, Response: true, Questions: []string{"many.test/1"}}
				for i := 0; i < MaxAnswers; i++ {
					p.Answers = append(p.Answers, "many.test 1 10.0.0."+itoa(i))
				}
				return p
			}(),
		},
		{
			desc: "more than 8 questions: 8 kept, answers not read",
			in:   manyQuestions,
			want: func() parsed {
				p := parsed{ID: 2}
				for i := 0; i < MaxQuestions; i++ {
					p.Questions = append(p.Questions, "q"+itoa(i)+".test/1")
				}
				return p
			}(),
		},
		{
			desc: "16 chained pointers",
			in:   chain(16),
			want: parsed{ID: 3, Questions: []string{"end.test/1"}},
		},
		{desc: "zero length", in: nil, err: ErrShort},
		{desc: "header only, 11 bytes", in: hdr(1, 0, 0, 0, 0, 0)[:11], err: ErrShort},
		{desc: "17 chained pointers", in: chain(17), err: ErrPointerLoop},
		{desc: "pointer to itself", in: cat(hdr(1, 0, 1, 0, 0, 0), ptrTo(12), []byte{0, 1, 0, 1}), err: ErrPointerLoop},
		{desc: "two pointers to each other", in: cat(hdr(1, 0, 1, 0, 0, 0), ptrTo(14), ptrTo(12), []byte{0, 1, 0, 1}), err: ErrPointerLoop},
		{desc: "label loop grows past 255", in: cat(hdr(1, 0, 1, 0, 0, 0), labelsThenPtr(12, long63), []byte{0, 1, 0, 1}), err: ErrNameTooLong},
		{desc: "pointer beyond the message", in: cat(hdr(1, 0, 1, 0, 0, 0), ptrTo(0x3fff), []byte{0, 1, 0, 1}), err: ErrPointerRange},
		{desc: "pointer into the header", in: cat(hdr(1, 0, 1, 0, 0, 0), ptrTo(2), []byte{0, 1, 0, 1}), err: ErrPointerRange},
		{desc: "pointer cut in half", in: cat(hdr(1, 0, 1, 0, 0, 0), []byte{0xc0}), err: ErrTruncated},
		{desc: "label of 64 bytes", in: cat(hdr(1, 0, 1, 0, 0, 0), wname(strings.Repeat("x", 64)), []byte{0, 1, 0, 1}), err: ErrBadLabel},
		{desc: "reserved label type 0x80", in: cat(hdr(1, 0, 1, 0, 0, 0), []byte{0x80, 0, 0, 1, 0, 1}), err: ErrBadLabel},
		{desc: "name of 256 bytes", in: cat(hdr(1, 0, 1, 0, 0, 0), q(over255, TypeA)), err: ErrNameTooLong},
		{desc: "label runs past the end", in: cat(hdr(1, 0, 1, 0, 0, 0), []byte{5, 'a', 'b'}), err: ErrTruncated},
		{desc: "name without its root label", in: cat(hdr(1, 0, 1, 0, 0, 0), []byte{1, 'a'}), err: ErrTruncated},
		{desc: "question without type and class", in: cat(hdr(1, 0, 1, 0, 0, 0), wname("a", "b"), []byte{0, 1}), err: ErrTruncated},
		{desc: "more questions announced than present", in: cat(hdr(1, 0, 2, 0, 0, 0), q(wname("a", "b"), 1)), err: ErrTruncated},
		{desc: "answer header cut", in: cat(hdr(1, 0x8180, 1, 1, 0, 0), q(wname("a", "b"), 1), ptrTo(12), []byte{0, 1, 0, 1}), err: ErrTruncated},
		{desc: "rdata past the end", in: cat(hdr(1, 0x8180, 1, 1, 0, 0), q(wname("a", "b"), 1), rr(ptrTo(12), TypeA, 1, []byte{1, 2, 3, 4})[:15]), err: ErrTruncated},
		{desc: "A record of 5 bytes", in: cat(hdr(1, 0x8180, 1, 1, 0, 0), q(wname("a", "b"), 1), rr(ptrTo(12), TypeA, 1, []byte{1, 2, 3, 4, 5})), err: ErrBadRDataLength},
		{desc: "AAAA record of 4 bytes", in: cat(hdr(1, 0x8180, 1, 1, 0, 0), q(wname("a", "b"), 28), rr(ptrTo(12), TypeAAAA, 1, []byte{1, 2, 3, 4})), err: ErrBadRDataLength},
		{desc: "uncompressed CNAME", in: cat(hdr(1, 0x8180, 1, 1, 0, 0), q(wname("a", "b"), 1), rr(ptrTo(12), TypeCNAME, 1, wname("c", "d"))), want: parsed{ID: 1, Response: true, Questions: []string{"a.b/1"}, Answers: []string{"a.b 5 c.d"}}},
		{desc: "CNAME target longer than its rdata", in: cat(hdr(1, 0x8180, 1, 1, 0, 0), q(wname("a", "b"), 1), shortCNAME), err: ErrBadRDataLength},
		{desc: "CNAME rdata with trailing garbage", in: cat(hdr(1, 0x8180, 1, 1, 0, 0), q(wname("a", "b"), 1), rr(ptrTo(12), TypeCNAME, 1, cat(wname("c", "d"), []byte{9}))), err: ErrBadRDataLength},
	}
	var m DNSMessage
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			err := ParseDNS(tc.in, &m)
			if !errors.Is(err, tc.err) {
				t.Fatalf("ParseDNS() error = %v, want %v", err, tc.err)
			}
			if tc.err != nil {
				return
			}
			if diff := cmp.Diff(summarize(&m), tc.want); diff != "" {
				t.Errorf("ParseDNS() (-got, +want):\n%s", diff)
			}
		})
	}
}

func TestParseDNSFields(t *testing.T) {
	var m DNSMessage
	if err := ParseDNS(sampleResponse(), &m); err != nil {
		t.Fatal(err)
	}
	if m.QDCount != 1 || m.ANCount != 3 || m.Opcode != 0 || m.Truncated {
		t.Errorf("header = %+v", m)
	}
	a := m.Answers[1]
	if a.TTL != 60 || a.Class != 1 || a.Addr != netip.MustParseAddr("93.184.216.34") || !a.Addr.Is4() {
		t.Errorf("A answer = %+v", a)
	}
	if q := m.Questions[0]; q.Class != 1 || q.Type != TypeA {
		t.Errorf("question = %+v", q)
	}
}

func TestParseDNSReuse(t *testing.T) {
	// Names of the first parse must not be overwritten by a failing one
	// until the caller parses again; a second good parse starts afresh.
	var m DNSMessage
	if err := ParseDNS(sampleResponse(), &m); err != nil {
		t.Fatal(err)
	}
	if err := ParseDNS(cat(hdr(1, 0, 1, 0, 0, 0), q(wname("other", "test"), 1)), &m); err != nil {
		t.Fatal(err)
	}
	if got := summarize(&m); len(got.Answers) != 0 || got.Questions[0] != "other.test/1" {
		t.Errorf("after reuse: %+v", got)
	}
}

func TestParseDNSAllocs(t *testing.T) {
	msg := sampleResponse()
	var m DNSMessage
	_ = ParseDNS(msg, &m) // the first use allocates the name store
	allocs := testing.AllocsPerRun(1000, func() {
		if err := ParseDNS(msg, &m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("ParseDNS allocates %v times per call, want 0", allocs)
	}
}

func TestNameClasses(t *testing.T) {
	tests := []struct {
		name           string
		reverse, local bool
	}{
		{"34.216.184.93.in-addr.arpa", true, false},
		{"in-addr.arpa", true, false},
		{"1.0.0.0.ip6.arpa", true, false},
		{"notin-addr.arpa", false, false},
		{"ip6.arpa.example.com", false, false},
		{"printer.local", false, true},
		{"local", false, true},
		{"nonlocal", false, false},
		{"example.com", false, false},
		{"", false, false},
	}
	for _, tc := range tests {
		if got := IsReverse(tc.name); got != tc.reverse {
			t.Errorf("IsReverse(%q) = %v, want %v", tc.name, got, tc.reverse)
		}
		if got := IsReverse([]byte(tc.name)); got != tc.reverse {
			t.Errorf("IsReverse([]byte(%q)) = %v, want %v", tc.name, got, tc.reverse)
		}
		if got := IsLocal(tc.name); got != tc.local {
			t.Errorf("IsLocal(%q) = %v, want %v", tc.name, got, tc.local)
		}
	}
}
