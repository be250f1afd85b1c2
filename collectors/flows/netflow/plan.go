package netflow

import (
	"fmt"
	"net/netip"
)

// Template is a v9 or IPFIX template as the exporter sent it, in the form
// the caller persists (Templates, LoadTemplates) so that data decodes
// right after a hub restart instead of waiting for the next template.
type Template struct {
	// Exporter is the address the template came from.
	Exporter netip.Addr
	// Domain is the v9 source id or the IPFIX observation domain id.
	Domain uint32
	// ID is the template id (256-65535).
	ID uint16
	// Version is 9 or 10.
	Version uint16
	// Options is true for an options template (its data is skipped).
	Options bool
	// Fields are the template's fields in order; for an options
	// template the scope fields come first.
	Fields []Field
}

// Field is one field specifier of a template.
type Field struct {
	// Type is the element id as sent: for an IPFIX enterprise-specific
	// element the top bit (0x8000) stays set, so a round trip through
	// persistence cannot turn it into an IANA element.
	Type uint16
	// Length is the field's length in bytes; 65535 marks an IPFIX
	// variable-length field.
	Length uint16
	// Enterprise is the private enterprise number of an IPFIX
	// enterprise-specific element (Type has its top bit set), else 0.
	Enterprise uint32
}

// varLength marks an IPFIX variable-length field (RFC 7011 §7).
const varLength = 0xffff

// The values a flow row needs, each read from one field of the record.
const (
	tSrc4 = iota
	tDst4
	tSrc6
	tDst6
	tSrcPort
	tDstPort
	tProto
	tPackets
	tOctets
	tEnd  // the flow's end time, in the unit given by plan.endKind
	tInit // systemInitTimeMilliseconds: the base of IPFIX uptimes
	nTargets
)

// How a flow's end time is expressed.
const (
	endNone      = iota // use the export time
	endUptime           // ms of exporter uptime (v9 LAST_SWITCHED, IPFIX flowEndSysUpTime)
	endSeconds          // flowEndSeconds
	endMillis           // flowEndMilliseconds
	endNTP              // flowEndMicroseconds / flowEndNanoseconds: NTP timestamp
	endDeltaMics        // flowEndDeltaMicroseconds: µs before the export time
)

// element says where an element id goes: its target, the largest length
// its abstract type allows, whether it must be exactly that long, and its
// rank among elements feeding the same target (lower wins).
type element struct {
	target, rank int
	max          uint16
	exact        bool
	end          int
}

// elementOf says what an IANA element id (v9 and IPFIX share them below
// 128) feeds, if anything. Packets and octets prefer the delta counters
// (2, 1), then the totals (86, 85), then the post-* counters (24, 23)
// some exporters send alone. End times prefer absolute clocks over
// uptime. A switch rather than a map: no package-level state.
func elementOf(id uint16) (element, bool) {
	switch id {
	case 8:
		return element{target: tSrc4, max: 4, exact: true}, true
	case 12:
		return element{target: tDst4, max: 4, exact: true}, true
	case 27:
		return element{target: tSrc6, max: 16, exact: true}, true
	case 28:
		return element{target: tDst6, max: 16, exact: true}, true
	case 7:
		return element{target: tSrcPort, max: 2}, true
	case 11:
		return element{target: tDstPort, max: 2}, true
	case 4:
		return element{target: tProto, max: 1}, true
	case 2, 86, 24:
		return element{target: tPackets, max: 8, rank: counterRank(id, 2, 86)}, true
	case 1, 85, 23:
		return element{target: tOctets, max: 8, rank: counterRank(id, 1, 85)}, true
	case 153:
		return element{target: tEnd, max: 8, rank: 0, end: endMillis}, true
	case 151:
		return element{target: tEnd, max: 4, rank: 1, end: endSeconds}, true
	case 155, 157:
		return element{target: tEnd, max: 8, exact: true, rank: 2, end: endNTP}, true
	case 159:
		return element{target: tEnd, max: 4, rank: 3, end: endDeltaMics}, true
	case 21:
		return element{target: tEnd, max: 4, rank: 4, end: endUptime}, true
	case 160:
		return element{target: tInit, max: 8}, true
	}
	return element{}, false
}

// counterRank ranks a counter: delta 0, total 1, post-* 2.
func counterRank(id, delta, total uint16) int {
	switch id {
	case delta:
		return 0
	case total:
		return 1
	}
	return 2
}

// ref locates one value in a record; n == 0 means absent.
type ref struct {
	off uint32
	n   uint8
}

// step is one field of a variable-length template, walked per record.
type step struct {
	length uint16 // varLength for a variable-length field
	target int8   // -1 when the field is not read
}

// plan is a compiled template. It is immutable once built, so decode
// goroutines share it without locks.
type plan struct {
	tmpl    Template
	options bool
	// recLen is the record length of a fixed-layout template, or the
	// shortest possible record of a variable-length one.
	recLen int
	// at holds the offsets of the targets in a fixed-layout record; for
	// a variable-length template only n is meaningful and steps gives
	// the offsets record by record.
	at      [nTargets]ref
	endKind int
	steps   []step // nil for fixed-layout templates
}

// compile checks a template and builds its plan. It refuses, as
// ErrMalformed, what would make decoding unsafe or ambiguous:
//   - no fields, or more than maxTemplateFields;
//   - a field of length 0 (Telegraf #14370: a zero-length field crashed
//     its decoder; here a record could have length 0);
//   - a field this package reads that is longer than its type allows or
//     variable-length (pmacct #934: a 16-byte "port" overflowed a stack
//     buffer). RFC 7011 §6.2 allows shorter (reduced-size) encodings,
//     never longer ones, so such a template is broken and is refused
//     whole rather than read by its low-order bytes.
//
// Fields nobody reads (enterprise elements included) are only skipped,
// whatever their length. Options templates read only
// systemInitTimeMilliseconds.
func compile(t Template) (*plan, error) {
	if len(t.Fields) == 0 {
		return nil, fmt.Errorf("%w: template %d has no fields", ErrMalformed, t.ID)
	}
	if len(t.Fields) > maxTemplateFields {
		return nil, fmt.Errorf("%w: template %d has %d fields, limit %d", ErrMalformed, t.ID, len(t.Fields), maxTemplateFields)
	}
	ipfix := t.Version == 10
	var chosen [nTargets]int // field index + 1, 0 when absent
	variable := false
	for i, f := range t.Fields {
		if f.Length == 0 {
			return nil, fmt.Errorf("%w: template %d field %d (type %d) has length 0", ErrMalformed, t.ID, i, f.Type)
		}
		if ipfix && f.Length == varLength {
			variable = true
		}
		e, ok := elementOf(f.Type)
		if !ok || (t.Options && e.target != tInit) {
			continue
		}
		if (ipfix && f.Length == varLength) || f.Length > e.max || (e.exact && f.Length != e.max) {
			return nil, fmt.Errorf("%w: template %d field %d (type %d) has length %d, its type allows %d", ErrMalformed, t.ID, i, f.Type, f.Length, e.max)
		}
		if c := chosen[e.target]; c == 0 || e.rank < rankOf(t.Fields[c-1].Type) {
			chosen[e.target] = i + 1
		}
	}
	p := &plan{tmpl: t, options: t.Options}
	if variable {
		p.steps = make([]step, len(t.Fields))
	}
	off := 0
	for i, f := range t.Fields {
		target := -1
		for tg, c := range chosen {
			if c == i+1 {
				target = tg
			}
		}
		if target >= 0 {
			p.at[target] = ref{off: uint32(off), n: uint8(f.Length)}
			if target == tEnd {
				e, _ := elementOf(f.Type)
				p.endKind = e.end
			}
		}
		if variable {
			p.steps[i] = step{length: f.Length, target: int8(target)}
		}
		if ipfix && f.Length == varLength {
			off++ // at least the one-byte length prefix
		} else {
			off += int(f.Length)
		}
	}
	p.recLen = off
	return p, nil
}

// rankOf is the rank of a field compile already accepted.
func rankOf(id uint16) int {
	e, _ := elementOf(id)
	return e.rank
}
