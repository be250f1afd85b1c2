package syslog

import (
	"bytes"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"netmon/store/record"
)

const testdataDir = "../../testdata/syslog"

var loopback = netip.MustParseAddr("127.0.0.1")

// captured is one datagram of logger.pcap and when it was captured.
type captured struct {
	data []byte
	at   time.Time
}

// loggerDatagrams returns the datagrams of testdata/syslog/logger.pcap,
// sent by util-linux logger (see the README there).
func loggerDatagrams(tb testing.TB) []captured {
	tb.Helper()
	f, err := os.Open(filepath.Join(testdataDir, "logger.pcap"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var out []captured
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		if u, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP); ok {
			out = append(out, captured{data: u.Payload, at: ci.Timestamp})
		}
	}
	if len(out) == 0 {
		tb.Fatal("no datagram in logger.pcap")
	}
	return out
}

// TestParseLogger parses what the real logger sent, with the capture time
// as now, field by field.
func TestParseLogger(t *testing.T) {
	ts := time.Date(2026, 11, 21, 14, 52, 16, 0, time.UTC).Unix()
	ev := func(fac, sev uint8, tag, msg string) record.SyslogEvent {
		return record.SyslogEvent{TS: ts, Host: "vm", Source: loopback, Facility: fac, Severity: sev, Tag: tag, Message: msg}
	}
	want := []record.SyslogEvent{
		ev(16, 4, "app", "msg"),
		ev(4, 3, "sshd", "Failed password for root from 203.0.113.9 port 52100 ssh2"),
		ev(23, 7, "app", "ünïcödé and a\ttab"),
		ev(16, 4, "app", "msg 5424"),
		ev(3, 5, "app", "no time quality"),
		ev(1, 6, "app", "with structured data"),
		ev(16, 6, "bulk", "first bulk line"),
		ev(16, 6, "bulk", "second line with a colon: and [brackets]"),
		ev(16, 6, "bulk", "third line, tab\tinside"),
		ev(16, 6, "bulk", "quatrième ligne en UTF-8 — ünïcödé"),
		ev(16, 6, "bulk", "<script>alert(1)</script> shown literally"),
	}
	ds := loggerDatagrams(t)
	if len(ds) != len(want) {
		t.Fatalf("%d datagrams in logger.pcap, want %d", len(ds), len(want))
	}
	for i, d := range ds {
		got, err := Parse(d.data, loopback, d.at)
		if err != nil {
			t.Fatalf("datagram %d %q: %v", i, d.data, err)
		}
		if diff := cmp.Diff(got, want[i], addrCmp); diff != "" {
			t.Errorf("datagram %d %q (-got, +want):\n%s", i, d.data, diff)
		}
	}
}

var addrCmp = cmp.Comparer(func(a, b netip.Addr) bool { return a == b })

// TestParseHostile is RELIABILITY.md case 4 for the parser: every row is
// a datagram and the event (or error) it must give.
func TestParseHostile(t *testing.T) {
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	nowTS := now.Unix()
	at := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.Unix()
	}
	noon := at("2026-11-21T12:00:00Z")
	e := func(ts int64, host string, fac, sev uint8, tag, msg string) record.SyslogEvent {
		return record.SyslogEvent{TS: ts, Host: host, Source: loopback, Facility: fac, Severity: sev, Tag: tag, Message: msg}
	}
	long := "<13>Nov 21 12:00:00 host app: " + strings.Repeat("x", 64<<10)
	tests := []struct {
		name string
		in   string
		want record.SyslogEvent
		err  error
	}{
		{"NUL kept as U+FFFD, fields still parsed", "<13>Nov 21 12:00:00 host app: before\x00after",
			e(noon, "host", 1, 5, "app", "before\uFFFDafter"), nil},
		{"invalid UTF-8: one U+FFFD per byte", "<13>Nov 21 12:00:00 host app: bad \xff\xfe bytes",
			e(noon, "host", 1, 5, "app", "bad \uFFFD\uFFFD bytes"), nil},
		{"CR/LF inside kept, trailing CRLF is framing", "<13>Nov 21 12:00:00 host app: line1\r\nline2\r\n",
			e(noon, "host", 1, 5, "app", "line1\r\nline2"), nil},
		{"ANSI escape kept", "<13>Nov 21 12:00:00 host app: \x1b[31mred\x1b[0m",
			e(noon, "host", 1, 5, "app", "\x1b[31mred\x1b[0m"), nil},
		{"a U+FFFD already there stays", "<13>Nov 21 12:00:00 host app: \uFFFD",
			e(noon, "host", 1, 5, "app", "\uFFFD"), nil},
		{"RTL override kept (the UI escapes it)", "<13>Nov 21 12:00:00 host app: \u202eevil",
			e(noon, "host", 1, 5, "app", "\u202eevil"), nil},
		{"64 KiB line parsed whole (the receiver bounds size)", long,
			e(noon, "host", 1, 5, "app", strings.Repeat("x", 64<<10)), nil},
		{"trailing NUL and LF are framing", "<13>Nov 21 12:00:00 host app: msg\n\x00",
			e(noon, "host", 1, 5, "app", "msg"), nil},
		{"no hostname: the source address", "<13>Nov 21 12:00:00 app: msg",
			e(noon, "127.0.0.1", 1, 5, "app", "msg"), nil},
		{"tag with pid", "<13>Nov 21 12:00:00 host app[99]: msg",
			e(noon, "host", 1, 5, "app", "msg"), nil},
		{"no tag", "<13>Nov 21 12:00:00 host just text",
			e(noon, "host", 1, 5, "", "just text"), nil},
		{"PRI 0", "<0>Nov 21 12:00:00 host app: x", e(noon, "host", 0, 0, "app", "x"), nil},
		{"PRI 191", "<191>Nov 21 12:00:00 host app: x", e(noon, "host", 23, 7, "app", "x"), nil},
		{"December message in January: previous year", "<13>Dec 31 23:59:00 host app: x",
			e(at("2025-12-31T23:59:00Z"), "host", 1, 5, "app", "x"), nil},
		{"up to a day ahead: this year", "<13>Nov 22 14:00:00 host app: x",
			e(at("2026-11-22T14:00:00Z"), "host", 1, 5, "app", "x"), nil},
		{"day with leading zero", "<13>Nov 05 12:00:00 host app: x",
			e(at("2026-11-05T12:00:00Z"), "host", 1, 5, "app", "x"), nil},
		{"RFC 3339 time in 3164 (rsyslog forward format)", "<30>2026-11-21T14:00:00.123+01:00 host app[1]: iso",
			e(at("2026-11-21T13:00:00Z"), "host", 3, 6, "app", "iso"), nil},
		{"29 February outside a leap year: receive time", "<13>Feb 29 12:00:00 host app: leap",
			e(nowTS, "host", 1, 5, "app", "leap"), nil},
		{"RFC 5424 full", `<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3"] An application event`,
			e(at("2003-10-11T22:14:15Z"), "mymachine.example.com", 20, 5, "evntslog", "An application event"), nil},
		{"RFC 5424 all nil", "<165>1 - - - - - -", e(nowTS, "127.0.0.1", 20, 5, "", ""), nil},
		{"RFC 5424 BOM and NUL", "<165>1 2003-10-11T22:14:15.003Z host app 12 ID47 - \ufeffBOM\x00nul",
			e(at("2003-10-11T22:14:15Z"), "host", 20, 5, "app", "\ufeffBOM\uFFFDnul"), nil},
		{"RFC 5424 invalid time: fallback keeps the text", "<165>1 2003-13-45T99:99:99Z host app - - - bad time",
			e(nowTS, "127.0.0.1", 20, 5, "", "1 2003-13-45T99:99:99Z host app - - - bad time"), nil},
		{"Cisco IOS counter: fallback keeps the text", "<189>237: *Jan  8 19:46:03.295: %SYS-5-CONFIG_I: Configured",
			e(nowTS, "127.0.0.1", 23, 5, "", "237: *Jan  8 19:46:03.295: %SYS-5-CONFIG_I: Configured"), nil},
		{"garbage after PRI: fallback", "<13>\x01\x02 not a header",
			e(nowTS, "127.0.0.1", 1, 5, "", "\x01\x02 not a header"), nil},
		{"only a PRI", "<13>", e(nowTS, "127.0.0.1", 1, 5, "", ""), nil},
		{"leading zero PRI: fallback with its severity", "<013>Nov 21 12:00:00 host app: x",
			e(nowTS, "127.0.0.1", 1, 5, "", "Nov 21 12:00:00 host app: x"), nil},
		{"hostile host is kept literally (the UI escapes it)", "<13>Nov 21 12:00:00 <img src=x onerror=alert(1)> app: x",
			e(noon, "<img", 1, 5, "", "src=x onerror=alert(1)> app: x"), nil},
		{"RFC 3339 time with fraction and NUL", "<30>2026-11-21T14:00:00.123456Z host app: a\x00b",
			record.SyslogEvent{TS: at("2026-11-21T14:00:00Z"), Host: "host", Source: loopback, Facility: 3, Severity: 6, Tag: "app", Message: "a\uFFFDb"}, nil},
		{"RFC 3339-looking but invalid: fallback", "<30>2026-11-21T25:00:00Z host app: x",
			e(nowTS, "127.0.0.1", 3, 6, "", "2026-11-21T25:00:00Z host app: x"), nil},
		{"empty", "", record.SyslogEvent{}, ErrEmpty},
		{"only a newline", "\n", record.SyslogEvent{}, ErrEmpty},
		{"no PRI", "Nov 21 12:00:00 host app: no pri", record.SyslogEvent{}, ErrNoPRI},
		{"PRI unclosed", "<13 Nov 21", record.SyslogEvent{}, ErrNoPRI},
		{"PRI empty", "<>x", record.SyslogEvent{}, ErrNoPRI},
		{"PRI 192", "<192>Nov 21 12:00:00 host app: x", record.SyslogEvent{}, ErrBadPRI},
		{"PRI 999", "<999>x", record.SyslogEvent{}, ErrBadPRI},
		{"PRI of four digits", "<0013>x", record.SyslogEvent{}, ErrBadPRI},
		{"NUL before the PRI", "\x00<13>x", record.SyslogEvent{}, ErrNoPRI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.in), loopback, now)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			want := tt.want
			// Text with a U+FFFD the input did not have was altered: the
			// datagram is kept as received.
			if err == nil && strings.ContainsRune(want.Host+want.Tag+want.Message, utf8.RuneError) && !strings.Contains(tt.in, "\uFFFD") {
				want.Raw = []byte(tt.in)
			}
			if diff := cmp.Diff(got, want, addrCmp); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}

// TestParseRaw checks when a datagram is kept raw and under which
// reasons it counts: any NUL or invalid UTF-8 before the trailing framing,
// wherever it falls (also in a part not stored, such as a [pid], where
// the raw copy is its only trace); never for a clean message or framing.
func TestParseRaw(t *testing.T) {
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	tests := []struct {
		desc    string
		in      string
		altered uint8 // bits; Raw must be the input exactly when not 0
	}{
		{"clean", "<13>Nov 21 12:00:00 host app: ünïcödé\r\n", 0},
		{"U+FFFD already there is not an alteration", "<13>Nov 21 12:00:00 host app: \uFFFD", 0},
		{"trailing NUL and CRLF are framing", "<13>Nov 21 12:00:00 host app: msg\r\n\x00", 0},
		{"NUL in message", "<13>Nov 21 12:00:00 host app: a\x00b", alteredNUL},
		{"invalid UTF-8 in message, framing kept in raw", "<13>Nov 21 12:00:00 host app: \xc0\n", alteredInvalidUTF8},
		{"both in one message count once each", "<13>Nov 21 12:00:00 host app: \x00\x00\xff\xff", alteredInvalidUTF8 | alteredNUL},
		{"invalid UTF-8 in host (fallback)", "<13>Nov 21 12:00:00 h\xffst app: x", alteredInvalidUTF8},
		{"invalid UTF-8 in the [pid], which is not stored", "<13>Nov 21 12:00:00 host app[\xff]: x", alteredInvalidUTF8},
		{"RFC 5424 NUL in MSG", "<165>1 - host app - - - a\x00b", alteredNUL},
		{"RFC 5424 invalid UTF-8 in structured data", "<165>1 - host app - - [x@1 k=\"\xff\"] msg", alteredInvalidUTF8},
		{"truncated UTF-8 sequence before framing", "<13>Nov 21 12:00:00 host app: \xc3\n", alteredInvalidUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			p := newParser()
			ev, err := p.parse([]byte(tt.in), loopback, now)
			if err != nil {
				t.Fatal(err)
			}
			if p.altered != tt.altered {
				t.Errorf("altered = %02b, want %02b", p.altered, tt.altered)
			}
			var want []byte
			if tt.altered != 0 {
				want = []byte(tt.in)
			}
			if !bytes.Equal(ev.Raw, want) || (ev.Raw == nil) != (want == nil) {
				t.Errorf("Raw = %q, want %q", ev.Raw, want)
			}
		})
	}
}

// FuzzParse checks Parse's promises on any input, seeded with the real
// logger datagrams and testdata/syslog/hostile: no panic; on success a
// valid PRI split, valid UTF-8 without NUL in every text field, and the
// source address as Host when the message names none.
func FuzzParse(f *testing.F) {
	for _, d := range loggerDatagrams(f) {
		f.Add(d.data)
	}
	files, err := filepath.Glob(filepath.Join(testdataDir, "hostile", "*.txt"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no hostile seeds: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// NUL and invalid UTF-8 outside MSG (the hostile files have them in
	// MSG): in HOSTNAME, TAG, [pid], RFC 5424 structured data.
	for _, s := range []string{
		"<13>Nov 21 12:00:00 h\xffst a\x00p: both\x00and \xc0",
		"<13>Nov 21 12:00:00 host app[\xff\x00]: pid",
		"<165>1 2003-10-11T22:14:15.003Z h\xc3 app - - [x@1 k=\"\xff\x00\"] \xef\xbb\xbfm\x00",
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := Parse(data, loopback, now)
		if err != nil {
			return
		}
		if ev.Severity > 7 || ev.Facility > 23 || ev.Host == "" {
			t.Fatalf("bad event %+v", ev)
		}
		for _, s := range []string{ev.Host, ev.Tag, ev.Message} {
			if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
				t.Fatalf("field %q not clean in %+v", s, ev)
			}
		}
		if len(ev.Message) > 3*len(data) {
			t.Fatalf("message of %d bytes from %d", len(ev.Message), len(data))
		}
		// Nothing is lost: a message whose bytes needed replacing keeps
		// the datagram as received, and only such a message does.
		trimmed := bytes.TrimRight(data, "\n\r\x00")
		needed := !utf8.Valid(trimmed) || bytes.IndexByte(trimmed, 0) >= 0
		if needed != (ev.Raw != nil) || (ev.Raw != nil && !bytes.Equal(ev.Raw, data)) {
			t.Fatalf("raw %q for datagram %q", ev.Raw, data)
		}
	})
}

// BenchmarkParse parses the logger datagrams with a reused parser, as a
// receiver worker does, by format; BenchmarkParseFunc uses the package
// function, which builds a parser per call.
func BenchmarkParse(b *testing.B) {
	var f3164, f5424 [][]byte
	for _, d := range loggerDatagrams(b) {
		if is5424(d.data[bytes.IndexByte(d.data, '>')+1:]) {
			f5424 = append(f5424, d.data)
		} else {
			f3164 = append(f3164, d.data)
		}
	}
	now := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
	for _, bc := range []struct {
		name string
		ds   [][]byte
	}{{"rfc3164", f3164}, {"rfc5424", f5424}} {
		b.Run(bc.name, func(b *testing.B) {
			p := newParser()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := p.parse(bc.ds[i%len(bc.ds)], loopback, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseFunc(b *testing.B) {
	ds := loggerDatagrams(b)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		d := ds[i%len(ds)]
		if _, err := Parse(d.data, loopback, d.at); err != nil {
			b.Fatal(err)
		}
	}
}

// Parse parses one datagram with a parser of its own (the receiver keeps
// one per worker; tests and fuzzing want a fresh one each time).
func Parse(data []byte, from netip.Addr, now time.Time) (record.SyslogEvent, error) {
	return newParser().parse(data, from, now)
}
