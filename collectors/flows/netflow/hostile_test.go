package netflow

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"netmon/store/record"
)

// hostile is a crafted datagram and what it must give: an error matching
// err and no flows, or (err nil) flows flows and the Result fields set
// in res that are non-zero.
type hostile struct {
	name  string
	data  []byte
	err   error
	flows int
	res   Result
}

// v5Msg builds a v5 header declaring count records followed by recs
// 48-byte records.
func v5Msg(count, recs int) []byte {
	b := put16(nil, 5)
	b = put16(b, uint16(count))
	b = put32(b, 10000)
	b = put32(b, craftExport)
	b = put32(b, 0)
	b = append(b, make([]byte, 8)...)
	for i := range recs {
		r := make([]byte, v5Record)
		copy(r, []byte{10, 0, 0, byte(i), 10, 0, 1, byte(i)})
		r[38] = 6
		b = append(b, r...)
	}
	return b
}

// hostileCases are the known killers of flow decoders (RELIABILITY.md
// case 1) and the tolerated oddities next to them. A datagram whose
// error is checked starts with valid content where that matters, so the
// test also shows that nothing before the error leaks out.
func hostileCases() []hostile {
	basic := set(0, tmpl(300, basicFields...))
	rec := basicRecord(1, 9000)
	ipfixBasic := set(2, tmpl(300, basicFields...))
	varFields := []Field{{Type: 82, Length: varLength}, {Type: 8, Length: 4}, {Type: 12, Length: 4}, {Type: 2, Length: 4}, {Type: 0x8000 | 8, Length: 4, Enterprise: 9}}
	varRec := func(name []byte) []byte {
		var b []byte
		if len(name) < 255 {
			b = append(b, byte(len(name)))
		} else {
			b = put16(append(b, 255), uint16(len(name)))
		}
		b = append(b, name...)
		return append(b, 10, 0, 0, 1, 10, 0, 0, 2, 0, 0, 0, 5, 1, 2, 3, 4)
	}
	return []hostile{
		{name: "empty", data: nil, err: ErrShort},
		{name: "one byte", data: []byte{0}, err: ErrShort},
		{name: "version 7", data: []byte{0, 7, 0, 0}, err: ErrVersion},
		{name: "sflow-shaped", data: []byte{0, 0, 0, 5, 0, 0, 0, 1}, err: ErrVersion},

		{name: "v5 short header", data: v5Msg(0, 0)[:20], err: ErrShort},
		{name: "v5 count beyond length", data: v5Msg(30, 2), err: ErrShort},
		{name: "v5 count 65535", data: v5Msg(65535, 1), err: ErrShort},
		{name: "v5 zero records", data: v5Msg(0, 0)},
		{name: "v5 trailing bytes", data: append(v5Msg(2, 2), 0, 0, 0), flows: 2},

		{name: "v9 short header", data: v9Msg(1)[:19], err: ErrShort},
		{name: "ipfix short header", data: ipfixMsg(1)[:15], err: ErrShort},
		{name: "ipfix length below header", data: func() []byte { b := ipfixMsg(1); b[3] = 8; return b }(), err: ErrMalformed},
		{name: "ipfix length beyond datagram", data: func() []byte { b := ipfixMsg(1, ipfixBasic); b[3] += 40; return b }(), err: ErrShort},
		{name: "ipfix bytes after length ignored", data: append(ipfixMsg(1), 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0)},

		{name: "set length 0", data: v9Msg(1, basic, rawSet(300, 0, rec)), err: ErrMalformed},
		{name: "set length 3", data: v9Msg(1, rawSet(300, 3, rec)), err: ErrMalformed},
		{name: "set length beyond datagram", data: v9Msg(1, basic, rawSet(300, 4000, rec)), err: ErrMalformed},
		{name: "ipfix set length 0", data: ipfixMsg(1, rawSet(2, 0, nil)), err: ErrMalformed},
		{name: "trailing 3 bytes", data: append(v9Msg(1, basic, set(300, rec)), 0, 0, 0), flows: 1, res: Result{TemplatesLearned: 1}},

		{name: "zero-length field", data: v9Msg(1, set(0, tmpl(300, Field{Type: 8, Length: 4}, Field{Type: 7, Length: 0}))), err: ErrMalformed},
		{name: "zero-length unread field", data: v9Msg(1, set(0, tmpl(300, Field{Type: 8, Length: 4}, Field{Type: 99, Length: 0}))), err: ErrMalformed},
		{name: "16-byte port", data: v9Msg(1, set(0, tmpl(300, Field{Type: 8, Length: 4}, Field{Type: 7, Length: 16}))), err: ErrMalformed},
		{name: "16-byte IPv4 address", data: v9Msg(1, set(0, tmpl(300, Field{Type: 8, Length: 16}))), err: ErrMalformed},
		{name: "9-byte counter", data: ipfixMsg(1, set(2, tmpl(300, Field{Type: 1, Length: 9}))), err: ErrMalformed},
		{name: "variable-length protocol", data: ipfixMsg(1, set(2, tmpl(300, Field{Type: 4, Length: varLength}))), err: ErrMalformed},
		{name: "template with no fields", data: v9Msg(1, set(0, tmpl(300))), err: ErrMalformed},
		{name: "ipfix withdrawal ignored", data: ipfixMsg(1, set(2, tmpl(300)), set(2, tmpl(2)))},
		{name: "field count beyond set", data: v9Msg(1, set(0, put16(put16(nil, 300), 1000), make([]byte, 8))), err: ErrMalformed},
		{name: "field count 65535", data: v9Msg(1, set(0, put16(put16(nil, 300), 65535))), err: ErrMalformed},
		{name: "too many fields", data: v9Msg(1, set(0, tmpl(300, make([]Field, 300)...))), err: ErrMalformed},
		{name: "enterprise field cut", data: ipfixMsg(1, set(2, put16(put16(nil, 300), 1), []byte{0x80, 8, 0, 4, 0, 0})), err: ErrMalformed},
		{name: "template id 5", data: v9Msg(1, set(0, tmpl(5, basicFields...))), err: ErrMalformed},
		{name: "template set zero padding", data: v9Msg(1, set(0, tmpl(300, basicFields...), make([]byte, 6)), set(300, rec)), flows: 1, res: Result{TemplatesLearned: 1}},

		{name: "v9 options template too short", data: v9Msg(1, set(1, []byte{1, 44, 0, 4})), err: ErrMalformed},
		{name: "v9 options scope length not /4", data: v9Msg(1, set(1, put16(put16(put16(nil, 300), 3), 4), make([]byte, 8))), err: ErrMalformed},
		{name: "v9 options no fields", data: v9Msg(1, set(1, put16(put16(put16(nil, 300), 0), 0))), err: ErrMalformed},
		{name: "v9 options beyond set", data: v9Msg(1, set(1, put16(put16(put16(nil, 300), 4), 400), make([]byte, 8))), err: ErrMalformed},
		{name: "ipfix options scope count 0", data: ipfixMsg(1, set(3, put16(put16(put16(nil, 300), 1), 0), []byte{0, 1, 0, 4})), err: ErrMalformed},
		{name: "ipfix options scope beyond count", data: ipfixMsg(1, set(3, put16(put16(put16(nil, 300), 1), 2), []byte{0, 1, 0, 4})), err: ErrMalformed},
		{name: "ipfix options too short", data: ipfixMsg(1, set(3, []byte{1, 44, 0, 2})), err: ErrMalformed},
		{name: "options data skipped", res: Result{OptionsTemplates: 1, SkippedSets: 1},
			data: v9Msg(1, set(1, put16(put16(put16(nil, 300), 4), 4), []byte{0, 1, 0, 4, 0, 34, 0, 4}, []byte{0, 0}), set(300, make([]byte, 8), []byte{0, 0}))},

		{name: "unknown template counted", data: v9Msg(1, set(301, rec)), res: Result{MissingTemplate: 1}},
		{name: "reserved set id skipped", data: v9Msg(1, set(7, rec)), res: Result{SkippedSets: 1}},
		{name: "data set padding", data: v9Msg(1, basic, set(300, rec, rec, []byte{0, 0, 0})), flows: 2, res: Result{TemplatesLearned: 1}},
		{name: "error after good data", data: v9Msg(1, basic, set(300, rec), rawSet(300, 2, nil)), err: ErrMalformed},

		{name: "variable-length fields", flows: 3, res: Result{TemplatesLearned: 1},
			data: ipfixMsg(1, set(2, tmpl(300, varFields...)), set(300, varRec([]byte("eth0")), varRec(nil), varRec(bytes.Repeat([]byte("x"), 300))))},
		{name: "variable-length overrun", data: ipfixMsg(1, set(2, tmpl(300, varFields...)), set(300, []byte{200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})), err: ErrMalformed},
		{name: "variable-length 3-byte length overrun", data: ipfixMsg(1, set(2, tmpl(300, varFields...)), set(300, []byte{255, 1}, make([]byte, 15))), err: ErrMalformed},

		{name: "one-byte records", flows: 65000, res: Result{TemplatesLearned: 1},
			data: v9Msg(1, set(0, tmpl(300, Field{Type: 4, Length: 1})), set(300, make([]byte, 65000)))},
	}
}

// TestHostile: each case gives exactly its error and no flows, or its
// flows and no error, from a fresh decoder, in linear time. The 65 000
// one-byte records take ~5 ms alone and ~100 ms on a loaded CI machine
// (CI once saw 102 ms against a 100 ms bound); work quadratic in the
// records would take minutes, so one second separates the two without
// measuring the machine.
func TestHostile(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			d := NewDecoder(DefaultConfig())
			out := make([]record.Flow, 3) // flows already in out stay untouched
			start := time.Now()
			got, res, err := d.Decode(c.data, exporterA, craftNow, out)
			if el := time.Since(start); el > time.Second {
				t.Errorf("took %v: is the decoder's work no longer linear in the datagram?", el)
			}
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
				if len(got) != len(out) || res.Flows != 0 {
					t.Fatalf("%d flows appended with an error", len(got)-len(out))
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if n := len(got) - len(out); n != c.flows || res.Flows != c.flows {
				t.Fatalf("%d flows (Result %d), want %d", n, res.Flows, c.flows)
			}
			want := c.res
			want.Version, want.Flows = res.Version, res.Flows
			if res != want {
				t.Fatalf("result %+v, want %+v", res, want)
			}
		})
	}
}
