package netflow

import (
	"fmt"
	"net/netip"
	"time"

	"netmon/store/record"
)

// Header lengths and set ids of NetFlow v9 (RFC 3954) and IPFIX (RFC 7011).
const (
	v9Header    = 20
	ipfixHeader = 16

	v9Template      = 0
	v9Options       = 1
	ipfixTemplate   = 2
	ipfixOptions    = 3
	firstDataSetID  = 256
	setHeaderLength = 4
)

// decodeTemplated walks the sets of a v9 or IPFIX datagram. The v9 header
// count is not checked: exporters disagree on what it counts (records or
// sets), so the datagram length alone bounds the walk. Fewer than four
// bytes after the last set are padding.
func (d *Decoder) decodeTemplated(data []byte, exporter netip.Addr, now time.Time, out []record.Flow, res *Result) ([]record.Flow, error) {
	m := msg{exporter: exporter, version: res.Version}
	var hdr int
	tmplSet, optSet := uint16(ipfixTemplate), uint16(ipfixOptions)
	if m.version == 9 {
		if len(data) < v9Header {
			return out, fmt.Errorf("%w: v9 header needs %d bytes, have %d", ErrShort, v9Header, len(data))
		}
		m.uptime = be32(data[4:])
		secs := int64(be32(data[8:]))
		m.domain = be32(data[16:])
		m.exportMs = secs * 1000
		m.clk = newClock(now, secs)
		hdr, tmplSet, optSet = v9Header, v9Template, v9Options
	} else {
		if len(data) < ipfixHeader {
			return out, fmt.Errorf("%w: IPFIX header needs %d bytes, have %d", ErrShort, ipfixHeader, len(data))
		}
		l := int(be16(data[2:]))
		if l < ipfixHeader {
			return out, fmt.Errorf("%w: IPFIX message length %d", ErrMalformed, l)
		}
		if l > len(data) {
			return out, fmt.Errorf("%w: IPFIX message length %d, have %d bytes", ErrShort, l, len(data))
		}
		data = data[:l]
		m.clk = newClock(now, int64(be32(data[4:])))
		m.domain = be32(data[12:])
		hdr = ipfixHeader
	}
	m.ex = d.lookup(exporter)
	var err error
	for off := hdr; len(data)-off >= setHeaderLength; {
		id, l := be16(data[off:]), int(be16(data[off+2:]))
		if l < setHeaderLength || l > len(data)-off {
			return out, fmt.Errorf("%w: set %d at offset %d has length %d, %d bytes left", ErrMalformed, id, off, l, len(data)-off)
		}
		body := data[off+setHeaderLength : off+l]
		off += l
		switch {
		case id == tmplSet:
			err = d.templateSet(&m, body, res)
		case id == optSet:
			err = d.optionsSet(&m, body, res)
		case id >= firstDataSetID:
			out, err = d.dataSet(&m, id, body, out, res)
		default:
			res.SkippedSets++ // reserved ids
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// templateSet reads the template records of a set: id, field count and
// field specifiers (type, length, and for IPFIX enterprise elements a
// 4-byte enterprise number). Every count is checked against the bytes
// left before anything is read.
func (d *Decoder) templateSet(m *msg, body []byte, res *Result) error {
	ipfix := m.version == 10
	for p := 0; len(body)-p >= 4; {
		id, n := be16(body[p:]), int(be16(body[p+2:]))
		if ipfix && n == 0 {
			// A Template Withdrawal (RFC 7011 §8.1). Over UDP templates
			// expire instead (§8.4), and a forged withdrawal would only
			// cost flows, so it is ignored.
			p += 4
			continue
		}
		if id < firstDataSetID {
			if allZero(body[p:]) {
				return nil // padding
			}
			return fmt.Errorf("%w: template id %d", ErrMalformed, id)
		}
		if n == 0 {
			return fmt.Errorf("%w: template %d has no fields", ErrMalformed, id)
		}
		spec, err := fieldSpecs(body[p+4:], n, ipfix, id)
		if err != nil {
			return err
		}
		if err := d.learn(m, id, spec, n, false, res); err != nil {
			return err
		}
		res.TemplatesLearned++
		p += 4 + len(spec)
	}
	return nil
}

// optionsSet reads options template records. v9 gives the scope and
// option lengths in bytes (RFC 3954 §6.1); IPFIX gives a field count and a
// scope field count, which must be at least 1 (RFC 7011 §3.4.2.2).
func (d *Decoder) optionsSet(m *msg, body []byte, res *Result) error {
	ipfix := m.version == 10
	for p := 0; p < len(body); {
		rest := body[p:]
		if allZero(rest) {
			return nil // padding
		}
		if len(rest) < 4 {
			return fmt.Errorf("%w: options template too short (%d bytes)", ErrMalformed, len(rest))
		}
		id := be16(rest)
		if ipfix && be16(rest[2:]) == 0 {
			p += 4 // a withdrawal, ignored as in templateSet
			continue
		}
		if len(rest) < 6 {
			return fmt.Errorf("%w: options template too short (%d bytes)", ErrMalformed, len(rest))
		}
		if id < firstDataSetID {
			return fmt.Errorf("%w: options template id %d", ErrMalformed, id)
		}
		var n int
		var spec []byte
		if ipfix {
			n = int(be16(rest[2:]))
			scope := int(be16(rest[4:]))
			if scope == 0 || scope > n {
				return fmt.Errorf("%w: options template %d has %d scope fields of %d", ErrMalformed, id, scope, n)
			}
			var err error
			if spec, err = fieldSpecs(rest[6:], n, true, id); err != nil {
				return err
			}
		} else {
			scopeLen, optLen := int(be16(rest[2:])), int(be16(rest[4:]))
			if scopeLen%4 != 0 || optLen%4 != 0 || scopeLen+optLen == 0 {
				return fmt.Errorf("%w: options template %d scope length %d, option length %d", ErrMalformed, id, scopeLen, optLen)
			}
			if 6+scopeLen+optLen > len(rest) {
				return fmt.Errorf("%w: options template %d declares %d bytes of fields, set has %d", ErrMalformed, id, scopeLen+optLen, len(rest)-6)
			}
			n, spec = (scopeLen+optLen)/4, rest[6:6+scopeLen+optLen]
		}
		if err := d.learn(m, id, spec, n, true, res); err != nil {
			return err
		}
		res.OptionsTemplates++
		p += 6 + len(spec)
	}
	return nil
}

// fieldSpecs returns the bytes of n field specifiers at the start of b.
func fieldSpecs(b []byte, n int, ipfix bool, id uint16) ([]byte, error) {
	if n > maxTemplateFields {
		return nil, fmt.Errorf("%w: template %d has %d fields, limit %d", ErrMalformed, id, n, maxTemplateFields)
	}
	q := 0
	for i := range n {
		if len(b)-q < 4 {
			return nil, fmt.Errorf("%w: template %d field %d of %d beyond its set", ErrMalformed, id, i, n)
		}
		if ipfix && b[q]&0x80 != 0 {
			if len(b)-q < 8 {
				return nil, fmt.Errorf("%w: template %d field %d of %d beyond its set", ErrMalformed, id, i, n)
			}
			q += 4
		}
		q += 4
	}
	return b[:q], nil
}

// parseFields turns checked field specifiers into Fields.
func parseFields(spec []byte, n int, ipfix bool) []Field {
	fs := make([]Field, 0, n)
	for q := 0; q < len(spec); q += 4 {
		f := Field{Type: be16(spec[q:]), Length: be16(spec[q+2:])}
		if ipfix && f.Type&0x8000 != 0 {
			f.Enterprise = be32(spec[q+4:])
			q += 4
		}
		fs = append(fs, f)
	}
	return fs
}

// sameFields reports whether checked field specifiers equal fs, without
// allocating: the test every re-sent template goes through.
func sameFields(spec []byte, ipfix bool, fs []Field) bool {
	i := 0
	for q := 0; q < len(spec); q += 4 {
		if i == len(fs) {
			return false
		}
		f := fs[i]
		if f.Type != be16(spec[q:]) || f.Length != be16(spec[q+2:]) {
			return false
		}
		var pen uint32
		if ipfix && f.Type&0x8000 != 0 {
			pen = be32(spec[q+4:])
			q += 4
		}
		if f.Enterprise != pen {
			return false
		}
		i++
	}
	return i == len(fs)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
