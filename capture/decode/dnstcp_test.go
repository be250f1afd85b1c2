package decode

import (
	"bytes"
	"testing"
)

func framed(msgs ...[]byte) []byte {
	var out []byte
	for _, m := range msgs {
		out = append(out, byte(len(m)>>8), byte(len(m)))
		out = append(out, m...)
	}
	return out
}

var tcpQuery = []byte{0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1}

func TestSplitDNSTCP(t *testing.T) {
	two := framed(tcpQuery, tcpQuery[:12])
	msg, rest, err := SplitDNSTCP(two)
	if err != nil || !bytes.Equal(msg, tcpQuery) || len(rest) != 14 {
		t.Fatalf("first: %x %x %v", msg, rest, err)
	}
	msg, rest, err = SplitDNSTCP(rest)
	if err != nil || !bytes.Equal(msg, tcpQuery[:12]) || len(rest) != 0 {
		t.Fatalf("second: %x %x %v", msg, rest, err)
	}
	var m DNSMessage
	if err := ParseDNS(tcpQuery, &m); err != nil || len(m.Questions) != 1 || string(m.Questions[0].Name) != "example.test" {
		t.Fatalf("parse %+v %v", m.Questions, err)
	}
	for _, tc := range []struct {
		in   []byte
		want error
	}{
		{nil, ErrShort},
		{[]byte{0}, ErrShort},
		{[]byte{0, 11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, ErrShort}, // shorter than a header
		{framed(tcpQuery)[:20], ErrIncomplete},
		{[]byte{0, 30}, ErrIncomplete}, // the length alone in its own segment
	} {
		if _, _, err := SplitDNSTCP(tc.in); err != tc.want {
			t.Errorf("%x: %v, want %v", tc.in, err, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _, _ = SplitDNSTCP(two) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

// FuzzSplitDNSTCP: any segment splits into messages that lie inside it,
// in order, with lengths as announced, and each parses without panic.
func FuzzSplitDNSTCP(f *testing.F) {
	f.Add(framed(tcpQuery))
	f.Add(framed(tcpQuery, tcpQuery))
	f.Add(framed(tcpQuery)[:17])
	f.Add([]byte{0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m DNSMessage
		rest := data
		for len(rest) > 0 {
			msg, next, err := SplitDNSTCP(rest)
			if err != nil {
				return
			}
			if len(msg)+len(next)+2 != len(rest) || int(rest[0])<<8|int(rest[1]) != len(msg) {
				t.Fatalf("split %d into %d + %d", len(rest), len(msg), len(next))
			}
			_ = ParseDNS(msg, &m)
			rest = next
		}
	})
}
