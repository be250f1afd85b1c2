package netflow

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store/record"
)

// v9At is v9Msg with the header's uptime and wall clock given.
func v9At(uptime, secs uint32, sets ...[]byte) []byte {
	b := v9Msg(1, sets...)
	binary.BigEndian.PutUint32(b[4:], uptime)
	binary.BigEndian.PutUint32(b[8:], secs)
	return b
}

// ipfixAt is ipfixMsg exported at secs.
func ipfixAt(secs uint32, sets ...[]byte) []byte {
	b := ipfixMsg(1, sets...)
	binary.BigEndian.PutUint32(b[4:], secs)
	return b
}

// one is a one-record IPFIX message with the given template and record.
func one(fs []Field, rec ...[]byte) []byte {
	return ipfixMsg(1, set(2, tmpl(300, fs...)), set(300, rec...))
}

func u32(v uint32) []byte { return put32(nil, v) }
func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// TestFieldPlan: how fields map to a flow, field by field, for what
// softflowd does not send: variable-length and enterprise fields,
// reduced-size integers, every clock an exporter may use, the
// preference between alternative elements, and unusable clocks.
func TestFieldPlan(t *testing.T) {
	ex := int64(craftExport)
	a4, b4 := []byte{10, 0, 0, 1}, []byte{10, 0, 0, 2}
	addrs := []Field{{Type: 8, Length: 4}, {Type: 12, Length: 4}}
	src, dst := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	v6a := netip.MustParseAddr("2001:db8::a")
	ntp := func(unix int64) uint64 { return uint64(unix-ntpEpoch)<<32 | 0x80000000 }
	flow := func(ts int64) record.Flow { return record.Flow{TS: ts, Exporter: exporterA, Src: src, Dst: dst} }
	with := func(f record.Flow, edit func(*record.Flow)) record.Flow { edit(&f); return f }
	cases := []struct {
		name    string
		msg     []byte
		zeroNow bool // Decode gets time.Time{} instead of craftNow
		want    record.Flow
	}{
		{name: "variable-length field before read ones, enterprise field skipped",
			msg: one([]Field{{Type: 82, Length: varLength}, addrs[0], addrs[1], {Type: 0x8000 | 2, Length: 4, Enterprise: 9}, {Type: 2, Length: 4}},
				[]byte{4}, []byte("eth0"), a4, b4, u32(77), u32(5)),
			want: with(flow(ex), func(f *record.Flow) { f.Packets = 5 })},
		{name: "3-byte variable length",
			msg:  one([]Field{{Type: 82, Length: varLength}, addrs[0], addrs[1]}, []byte{255, 1, 44}, bytes.Repeat([]byte("x"), 300), a4, b4),
			want: flow(ex)},
		{name: "enterprise element with an IANA id is not read",
			msg:  one([]Field{{Type: 0x8000 | 8, Length: 4, Enterprise: 9}, addrs[1]}, a4, b4),
			want: record.Flow{TS: ex, Exporter: exporterA, Dst: dst}},
		{name: "reduced-size integers",
			msg: one(append(addrs, Field{Type: 7, Length: 1}, Field{Type: 11, Length: 2}, Field{Type: 4, Length: 1},
				Field{Type: 1, Length: 3}, Field{Type: 2, Length: 8}), a4, b4, []byte{53, 1, 187, 17, 1, 2, 3}, u64(1<<40)),
			want: with(flow(ex), func(f *record.Flow) {
				f.SrcPort, f.DstPort, f.Proto, f.Octets, f.Packets = 53, 443, 17, 0x010203, 1<<40
			})},
		{name: "flowEndSeconds", msg: one(append(addrs, Field{Type: 151, Length: 4}), a4, b4, u32(craftExport-100)), want: flow(ex - 100)},
		{name: "flowEndMilliseconds", msg: one(append(addrs, Field{Type: 153, Length: 8}), a4, b4, u64(uint64(ex-50)*1000+999)), want: flow(ex - 50)},
		{name: "flowEndMicroseconds (NTP)", msg: one(append(addrs, Field{Type: 155, Length: 8}), a4, b4, u64(ntp(ex-7))), want: flow(ex - 7)},
		{name: "flowEndNanoseconds (NTP)", msg: one(append(addrs, Field{Type: 157, Length: 8}), a4, b4, u64(ntp(ex-8))), want: flow(ex - 8)},
		{name: "flowEndDeltaMicroseconds", msg: one(append(addrs, Field{Type: 159, Length: 4}), a4, b4, u32(2_500_000)), want: flow(ex - 3)},
		{name: "flowEndSysUpTime with systemInitTimeMilliseconds in the record",
			msg:  one(append(addrs, Field{Type: 160, Length: 8}, Field{Type: 21, Length: 4}), a4, b4, u64(uint64(ex-3600)*1000), u32(3_599_000)),
			want: flow(ex - 1)},
		{name: "flowEndSysUpTime without an init time: export time",
			msg: one(append(addrs, Field{Type: 21, Length: 4}), a4, b4, u32(3_599_000)), want: flow(ex)},
		{name: "flowEndSysUpTime with the init time from options data",
			msg: ipfixMsg(1,
				set(3, put16(put16(put16(nil, 400), 2), 1), []byte{0, 143, 0, 4, 0, 160, 0, 8}),
				set(400, u32(1), u64(uint64(ex-3600)*1000)),
				set(2, tmpl(300, append(addrs, Field{Type: 21, Length: 4})...)),
				set(300, a4, b4, u32(3_590_000))),
			want: flow(ex - 10)},
		{name: "absolute time preferred over uptime, delta counters over totals",
			msg: one(append(addrs, Field{Type: 21, Length: 4}, Field{Type: 85, Length: 4}, Field{Type: 153, Length: 8}, Field{Type: 1, Length: 4}, Field{Type: 86, Length: 4}),
				a4, b4, u32(1), u32(999), u64(uint64(ex-20)*1000), u32(100), u32(3)),
			want: with(flow(ex-20), func(f *record.Flow) { f.Octets, f.Packets = 100, 3 })},
		{name: "post counters alone", msg: one(append(addrs, Field{Type: 23, Length: 4}, Field{Type: 24, Length: 4}), a4, b4, u32(1500), u32(2)),
			want: with(flow(ex), func(f *record.Flow) { f.Octets, f.Packets = 1500, 2 })},
		{name: "IPv4 zero, IPv6 set: IPv6",
			msg:  one([]Field{{Type: 8, Length: 4}, {Type: 27, Length: 16}}, make([]byte, 4), v6a.AsSlice()),
			want: record.Flow{TS: ex, Exporter: exporterA, Src: v6a}},
		{name: "IPv4 set, IPv6 zero: IPv4",
			msg:  one([]Field{{Type: 8, Length: 4}, {Type: 27, Length: 16}}, a4, make([]byte, 16)),
			want: record.Flow{TS: ex, Exporter: exporterA, Src: src}},
		{name: "flow time 0: export time", msg: one(append(addrs, Field{Type: 153, Length: 8}), a4, b4, u64(0)), want: flow(ex)},
		{name: "flow time two days ahead: export time",
			msg: one(append(addrs, Field{Type: 151, Length: 4}), a4, b4, u32(craftExport+2*86400)), want: flow(ex)},
		{name: "export time 0 and no flow time: receive time",
			msg: ipfixAt(0, set(2, tmpl(300, addrs...)), set(300, a4, b4)), want: flow(craftNow.Unix())},
		{name: "export time a year ahead: receive time",
			msg: ipfixAt(craftExport+366*86400, set(2, tmpl(300, addrs...)), set(300, a4, b4)), want: flow(craftNow.Unix())},
		{name: "no receive time: no upper bound",
			msg: ipfixAt(craftExport+366*86400, set(2, tmpl(300, addrs...)), set(300, a4, b4)), zeroNow: true, want: flow(ex + 366*86400)},
		{name: "v9 LAST_SWITCHED",
			msg: v9At(10_000, craftExport, set(0, tmpl(300, append(addrs, Field{Type: 21, Length: 4})...)), set(300, a4, b4, u32(7_500))), want: flow(ex - 3)},
		{name: "v9 LAST_SWITCHED after the export: export time",
			msg: v9At(10_000, craftExport, set(0, tmpl(300, append(addrs, Field{Type: 21, Length: 4})...)), set(300, a4, b4, u32(10_900))), want: flow(ex)},
		{name: "v9 uptime wrapped since the flow",
			msg: v9At(1_000, craftExport, set(0, tmpl(300, append(addrs, Field{Type: 21, Length: 4})...)), set(300, a4, b4, u32(0xffffffff-4095))), want: flow(ex - 6)},
		{name: "v9 header clock 0: receive time",
			msg: v9At(10_000, 0, set(0, tmpl(300, append(addrs, Field{Type: 21, Length: 4})...)), set(300, a4, b4, u32(7_500))), want: flow(craftNow.Unix())},
		{name: "v9 field type 65535 is a plain length-4 field",
			msg: v9At(10_000, craftExport, set(0, tmpl(300, append(addrs, Field{Type: 0xffff, Length: 4})...)), set(300, a4, b4, u32(7))), want: flow(ex)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := craftNow
			if c.zeroNow {
				now = time.Time{}
			}
			fs, _, err := NewDecoder(DefaultConfig()).Decode(c.msg, exporterA, now, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fs, []record.Flow{c.want}, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}

// TestDecodeV5Fields checks every v5 field this package reads against a
// hand-built record.
func TestDecodeV5Fields(t *testing.T) {
	b := v5Msg(1, 0)
	binary.BigEndian.PutUint32(b[12:], 750_000_000) // 0.75 s
	r := make([]byte, v5Record)
	copy(r, []byte{192, 0, 2, 9, 198, 51, 100, 7})
	binary.BigEndian.PutUint32(r[16:], 12)
	binary.BigEndian.PutUint32(r[20:], 3400)
	binary.BigEndian.PutUint32(r[28:], 8_000) // Last: 2 s before the header's uptime
	binary.BigEndian.PutUint16(r[32:], 5353)
	binary.BigEndian.PutUint16(r[34:], 53)
	r[38] = 17
	fs, res, err := NewDecoder(DefaultConfig()).Decode(append(b, r...), exporterA, craftNow, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []record.Flow{{TS: int64(craftExport) - 2, Exporter: exporterA, Src: netip.MustParseAddr("192.0.2.9"),
		Dst: netip.MustParseAddr("198.51.100.7"), SrcPort: 5353, DstPort: 53, Proto: 17, Packets: 12, Octets: 3400}}
	if diff := cmp.Diff(fs, want, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" || res.Version != 5 || res.Flows != 1 {
		t.Errorf("%+v (-got, +want):\n%s", res, diff)
	}
}
