package syslog

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	gosyslog "github.com/leodido/go-syslog/v4"
	"github.com/leodido/go-syslog/v4/rfc3164"
	"github.com/leodido/go-syslog/v4/rfc5424"

	"netmon/store/record"
)

// Errors returned by parser.parse; the receiver counts each under its own reason.
var (
	// ErrEmpty is a datagram with nothing but framing bytes.
	ErrEmpty = errors.New("syslog: empty message")
	// ErrNoPRI is a message that does not start with <PRI>.
	ErrNoPRI = errors.New("syslog: no <PRI> at the start")
	// ErrBadPRI is a PRI above 191 (facility above 23).
	ErrBadPRI = errors.New("syslog: PRI out of range")
)

// Reasons a datagram is kept raw (bits of parser.altered, reasons of
// netmon_syslog_altered_total): it holds bytes no text column stores. They
// become U+FFFD where they fall in host, tag or message; where they fall
// in a part not stored (a 3164 [pid], 5424 structured data) the raw copy
// is the only trace of them. The datagram as a whole decides, so one
// message counts once per reason, and trailing framing (LF, CR, NUL) does
// not count.
const (
	alteredInvalidUTF8 = 1 << iota
	alteredNUL
)

// alteredBy says which replacements the text of data will need.
func alteredBy(data []byte) uint8 {
	var a uint8
	if !utf8.Valid(data) {
		a |= alteredInvalidUTF8
	}
	if bytes.IndexByte(data, 0) >= 0 {
		a |= alteredNUL
	}
	return a
}

// parser holds a worker's two leodido machines and a scratch buffer; it is
// not safe for concurrent use.
type parser struct {
	// altered is what the last parse had to replace (alteredInvalidUTF8,
	// alteredNUL), for the worker's counters.
	altered      uint8
	p3164, p5424 gosyslog.Machine
	scratch      []byte
}

// newParser builds the two machines with the options parse documents.
func newParser() *parser {
	return &parser{
		// Best effort so that a refusal still returns quickly; we do not
		// use its partial results (see parse3164). Lenient day and second
		// fractions accept common deviations ("Feb 05", "12:00:01.250"),
		// RFC 3339 the rsyslog forward format, embedded newlines the
		// multi-line messages a datagram can hold unambiguously.
		p3164: rfc3164.NewParser(rfc3164.WithBestEffort(), rfc3164.WithRFC3339(),
			rfc3164.WithLenientDay(), rfc3164.WithSecondFractions(), rfc3164.WithEmbeddedNewlines()),
		p5424: rfc5424.NewParser(rfc5424.WithBestEffort()),
	}
}

// parse parses one syslog datagram received from from at now, with this
// parser's machines and scratch buffer (the receiver keeps one parser per
// worker).
//
// RFC 5424 is recognised by its version after the PRI ("<165>1 ..."),
// anything else is read as RFC 3164, the format most devices and logger
// send. Both go through leodido/go-syslog; when it refuses a message that
// has a valid PRI, the event keeps the severity and facility of the PRI,
// the whole text after the PRI as Message, no Tag and the receive time.
// A message without a PRI (or with one above 191) is an error.
//
// Fields: Host is HOSTNAME, or the source address when absent; Tag is the
// 3164 TAG (without its [pid]) or the 5424 APP-NAME; TS is the message's
// time, or now when it has none. RFC 3164 carries neither year nor zone:
// the time is read as UTC in the current year, or in the previous year
// when that would put it more than a day in the future (a December
// message read in January).
//
// Message is byte-exact, CR, LF, tabs and escape sequences included,
// except that NUL bytes and each byte of invalid UTF-8 become U+FFFD
// (record.SyslogEvent: databases refuse them in text). When the datagram
// holds such bytes, Raw keeps it exactly as received (trailing framing
// included), so nothing is lost; otherwise Raw is nil. Trailing
// LF, CR and NUL bytes are framing added by senders, not content, and are
// removed.
func (p *parser) parse(data []byte, from netip.Addr, now time.Time) (record.SyslogEvent, error) {
	received := data
	data = bytes.TrimRight(data, "\n\r\x00")
	p.altered = alteredBy(data)
	if len(data) == 0 {
		return record.SyslogEvent{}, ErrEmpty
	}
	pri, n, err := readPRI(data)
	if err != nil {
		return record.SyslogEvent{}, err
	}
	ev := record.SyslogEvent{TS: now.Unix(), Source: from, Facility: pri >> 3, Severity: pri & 7}
	body := data[n:]
	var ok bool
	if is5424(body) {
		ok = p.parse5424(data, &ev)
	} else {
		ok = p.parse3164(data, n, &ev, now)
	}
	if !ok {
		ev.TS, ev.Host, ev.Tag = now.Unix(), "", ""
		ev.Message = clean(body)
	}
	if ev.Host == "" && from.IsValid() {
		ev.Host = from.String()
	}
	if p.altered != 0 {
		ev.Raw = bytes.Clone(received)
	}
	return ev, nil
}

// readPRI reads "<N>" with N of one to three digits and returns N and the
// length of the PRI part.
func readPRI(b []byte) (uint8, int, error) {
	if len(b) < 3 || b[0] != '<' {
		return 0, 0, ErrNoPRI
	}
	v, i := 0, 1
	for ; i < len(b) && i <= 3 && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + int(b[i]-'0')
	}
	switch {
	case i == 1 || i == len(b):
		return 0, 0, ErrNoPRI
	case b[i] >= '0' && b[i] <= '9', v > 191:
		return 0, 0, ErrBadPRI // four digits or more, or facility > 23
	case b[i] != '>':
		return 0, 0, ErrNoPRI
	}
	return uint8(v), i + 1, nil
}

// is5424 reports whether the text after the PRI starts with an RFC 5424
// VERSION (a number without leading zero) and a space.
func is5424(b []byte) bool {
	i := 0
	for i < len(b) && i < 3 && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i > 0 && b[0] != '0' && i < len(b) && b[i] == ' '
}

// unparsable reports whether c is a byte leodido's RFC 3164 grammar does
// not accept anywhere (controls other than TAB, CR, LF; DEL).
func unparsable(c byte) bool {
	return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f
}

// hasUnparsable reports whether b holds a byte unparsable refuses.
func hasUnparsable(b []byte) bool {
	for _, c := range b {
		if unparsable(c) {
			return true
		}
	}
	return false
}

// parse3164 fills ev from an RFC 3164 message. MSG is the tail of the
// datagram, so the header may be rewritten for leodido's grammar as long
// as Message is cut from the original bytes by its parsed length:
//   - NUL and control bytes, which real messages carry (ANSI colours, a C
//     string sent whole) and the grammar refuses, are masked with 0x80, a
//     byte it accepts in MSG only;
//   - an RFC 3339 time with fractions (rsyslog's forward format, which the
//     grammar refuses) is read here and replaced by a plain one.
func (p *parser) parse3164(data []byte, priLen int, ev *record.SyslogEvent, now time.Time) bool {
	in := data
	t3339, n3339 := leadingRFC3339(data[priLen:])
	rewrite := n3339 > 0 || hasUnparsable(data)
	if rewrite {
		p.scratch = append(p.scratch[:0], data[:priLen]...)
		if n3339 > 0 {
			p.scratch = append(p.scratch, plain3339...)
		}
		p.scratch = append(p.scratch, data[priLen+n3339:]...)
		for i, c := range p.scratch {
			if unparsable(c) {
				p.scratch[i] = 0x80
			}
		}
		in = p.scratch
	}
	msg, err := p.p3164.Parse(in)
	if err != nil || msg == nil {
		return false // partial best-effort results may have cut MSG
	}
	m, ok := msg.(*rfc3164.SyslogMessage)
	if !ok || m.Message == nil || len(*m.Message) > len(data)-priLen {
		return false
	}
	if rewrite {
		ev.Message = clean(data[len(data)-len(*m.Message):])
	} else {
		ev.Message = cleanString(m.Message) // the parser's copy is exact
	}
	ev.Host = cleanString(m.Hostname)
	ev.Tag = cleanString(m.Appname)
	t := t3339
	if n3339 == 0 && m.Timestamp != nil {
		t = *m.Timestamp
		if t.Year() == 0 { // a Stamp: no year in the message
			t = inferYear(t, now)
		}
	}
	if t.Year() >= 1970 {
		ev.TS = t.Unix()
	}
	return true
}

// plain3339 stands in for an RFC 3339 time the grammar would refuse.
const plain3339 = "2000-01-01T00:00:00Z"

// leadingRFC3339 reads an RFC 3339 time (fractions allowed) ending at the
// first space of b; n is its length, 0 when b does not start with one.
func leadingRFC3339(b []byte) (time.Time, int) {
	n := bytes.IndexByte(b, ' ')
	if n < len(plain3339) || b[4] != '-' || b[10] != 'T' {
		return time.Time{}, 0
	}
	t, err := time.Parse(time.RFC3339Nano, string(b[:n]))
	if err != nil {
		return time.Time{}, 0
	}
	return t, n
}

// parse5424 fills ev from an RFC 5424 message, whose MSG may hold any
// octet: it is taken as parsed, then cleaned.
func (p *parser) parse5424(data []byte, ev *record.SyslogEvent) bool {
	msg, err := p.p5424.Parse(data)
	if err != nil || msg == nil {
		return false
	}
	m, ok := msg.(*rfc5424.SyslogMessage)
	if !ok {
		return false
	}
	if m.Message != nil {
		ev.Message = cleanString(m.Message)
	}
	ev.Host = cleanString(m.Hostname)
	ev.Tag = cleanString(m.Appname)
	if m.Timestamp != nil && m.Timestamp.Year() >= 1970 {
		ev.TS = m.Timestamp.Unix()
	}
	return true
}

// inferYear places a yearless RFC 3164 time (read as UTC) in now's year,
// or the year before when that is more than a day after now. A 29
// February that exists in neither year yields the zero time (the caller
// then keeps the receive time).
func inferYear(t, now time.Time) time.Time {
	limit := now.Add(24 * time.Hour)
	for _, y := range []int{now.UTC().Year(), now.UTC().Year() - 1} {
		c := time.Date(y, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		if c.Day() == t.Day() && !c.After(limit) {
			return c
		}
	}
	return time.Time{}
}

// clean returns b as a string with NUL and every byte of invalid UTF-8
// replaced by U+FFFD, all else unchanged.
func clean(b []byte) string {
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 16)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == 0 || (r == utf8.RuneError && size == 1) {
			sb.WriteRune(utf8.RuneError)
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}

// cleanString is clean for an optional parsed field ("" when absent).
func cleanString(s *string) string {
	if s == nil {
		return ""
	}
	if utf8.ValidString(*s) && strings.IndexByte(*s, 0) < 0 {
		return *s
	}
	return clean([]byte(*s))
}
