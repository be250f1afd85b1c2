package intake

import (
	"bytes"
	"errors"
	"reflect"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"netmon/agentmode/wire"
	"netmon/app/errs"
)

// Batch is a telemetry batch as the intake reads it: wire.Telemetry with
// the connection inventory kept as JSON. The inventory is most of a
// batch's bytes and the hub only stores it, so decoding it into structs
// and encoding it again (half the hub's CPU per batch) is done only when
// the document needs repair; see Conns.
type Batch struct {
	TS          int64            `json:"ts"`
	Seq         uint64           `json:"seq,omitempty"`
	Dropped     uint64           `json:"dropped,omitempty"`
	Interfaces  []wire.Interface `json:"interfaces"`
	Connections Conns            `json:"connections"`
	AttrMethod  string           `json:"attr_method,omitempty"`
	AttrIface   string           `json:"attr_iface,omitempty"`
	AttrNote    string           `json:"attr_note,omitempty"`
	Version     string           `json:"version,omitempty"`
}

// Conns is a connection inventory ([]wire.Connection) held as the compact
// JSON document the store keeps. Reading it checks every element in one
// pass over the tokens: an array of objects with only wire.Connection's
// names, strings within their length bounds, valid UTF-8 and an int32 pid
// is kept byte for byte (compacted). Anything else — an unknown name, an
// over-long or invalid string, null elements — goes the slow way: decoded
// into wire.Connection (invalid UTF-8 becoming U+FFFD, unknown names
// dropped), clipped, and encoded again, so the stored document is always
// a list of well-formed connections whatever an agent sends.
type Conns struct {
	doc []byte // compact JSON array, never nil once read
	n   int
}

// Len is the number of connections.
func (c Conns) Len() int { return c.n }

// JSON is the compact document ("[]" when empty).
func (c Conns) JSON() []byte {
	if c.doc == nil {
		return []byte("[]")
	}
	return c.doc
}

// JSONSchemaAlias documents the field in the OpenAPI document as what it
// is on the wire (invopop/jsonschema calls it).
func (Conns) JSONSchemaAlias() any { return []wire.Connection{} }

// connFields are wire.Connection's names as they appear quoted in JSON,
// with the longest text kept (0: the pid, a number).
var connFields = [...]struct {
	name  string
	limit int
}{{`"proto"`, 16}, {`"local_addr"`, 64}, {`"remote_addr"`, 64}, {`"status"`, 32}, {`"pid"`, 0}, {`"process"`, maxTextField}}

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (c *Conns) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	at := dec.StackPointer() // where raw is in the document
	if raw.Kind() == 'n' {
		c.doc, c.n = []byte("[]"), 0
		return nil
	}
	if raw.Kind() != '[' {
		return &jsonv2.SemanticError{JSONKind: raw.Kind(), GoType: connsType}
	}
	if n, ok := scanConns(raw); ok {
		if n > maxConnections {
			return tooManyConns()
		}
		doc := jsontext.Value(bytes.Clone(raw))
		if bytes.ContainsAny(doc, " \t\r\n") {
			if err := doc.Compact(); err != nil {
				return err
			}
		}
		c.doc, c.n = doc, n
		return nil
	}
	var list []wire.Connection
	if err := jsonv2.Unmarshal(raw, &list, jsontext.AllowInvalidUTF8(true), jsonv2.MatchCaseInsensitiveNames(true)); err != nil {
		// The error's pointer is within raw; make it the body's.
		var se *jsonv2.SemanticError
		if errors.As(err, &se) {
			se.JSONPointer = at + se.JSONPointer
		}
		return err
	}
	if len(list) > maxConnections {
		return tooManyConns()
	}
	for i := range list {
		l := &list[i]
		l.Proto, l.LocalAddr, l.RemoteAddr = clip(l.Proto, 16), clip(l.LocalAddr, 64), clip(l.RemoteAddr, 64)
		l.Status, l.Process = clip(l.Status, 32), clip(l.Process, maxTextField)
	}
	if list == nil {
		list = []wire.Connection{}
	}
	doc, err := jsonv2.Marshal(list)
	if err != nil {
		return err
	}
	c.doc, c.n = doc, len(list)
	return nil
}

var connsType = reflect.TypeFor[[]wire.Connection]()

func tooManyConns() error {
	return errs.TooLargef("a batch carries at most %d interfaces and %d connections", maxInterfaces, maxConnections)
}

// scanConns walks an array of connection objects and reports whether it
// can be stored as it is, and how many elements it has. raw was already
// read by a jsontext.Decoder, so it is syntactically valid JSON; the walk
// only has to recognise the shape, and gives up (false) on anything
// unexpected, leaving the verdict to the full decoder. A hand-written walk
// because jsontext's tokenizer, a second pass over the same bytes, cost as
// much as decoding the structs did.
func scanConns(raw []byte) (int, bool) {
	p := skipWS(raw, 0)
	if p >= len(raw) || raw[p] != '[' {
		return 0, false
	}
	p = skipWS(raw, p+1)
	if p < len(raw) && raw[p] == ']' {
		return 0, skipWS(raw, p+1) == len(raw)
	}
	n := 0
	for {
		if p >= len(raw) || raw[p] != '{' {
			return 0, false
		}
		p = skipWS(raw, p+1)
		var seen uint8
		if p < len(raw) && raw[p] == '}' {
			p++
		} else {
			for {
				end, ok := stringEnd(raw, p)
				if !ok {
					return 0, false
				}
				field := -1
				for i, f := range connFields {
					if string(raw[p:end]) == f.name {
						field = i
						break
					}
				}
				if field < 0 || seen&(1<<field) != 0 {
					return 0, false
				}
				seen |= 1 << field
				p = skipWS(raw, end)
				if p >= len(raw) || raw[p] != ':' {
					return 0, false
				}
				p = skipWS(raw, p+1)
				if connFields[field].limit == 0 {
					end = numberEnd(raw, p)
					if !isInt32(raw[p:end]) {
						return 0, false
					}
				} else {
					if end, ok = stringEnd(raw, p); !ok || !plainString(raw[p+1:end-1], connFields[field].limit) {
						return 0, false
					}
				}
				p = skipWS(raw, end)
				if p < len(raw) && raw[p] == ',' {
					p = skipWS(raw, p+1)
					continue
				}
				if p < len(raw) && raw[p] == '}' {
					p++
					break
				}
				return 0, false
			}
		}
		n++
		p = skipWS(raw, p)
		if p < len(raw) && raw[p] == ',' {
			p = skipWS(raw, p+1)
			continue
		}
		if p < len(raw) && raw[p] == ']' {
			return n, skipWS(raw, p+1) == len(raw)
		}
		return 0, false
	}
}

func skipWS(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r') {
		p++
	}
	return p
}

// stringEnd returns the index after the string starting at b[p] ('"').
func stringEnd(b []byte, p int) (int, bool) {
	if p >= len(b) || b[p] != '"' {
		return 0, false
	}
	for i := p + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

func numberEnd(b []byte, p int) int {
	for p < len(b) && (b[p] == '-' || (b[p] >= '0' && b[p] <= '9')) {
		p++
	}
	return p
}

// plainString reports whether a string's raw content is within limit
// bytes (its decoded text is never longer than its raw form), valid UTF-8,
// and free of \u escapes of surrogates, which may encode invalid UTF-16.
func plainString(s []byte, limit int) bool {
	if len(s) > limit || !utf8.Valid(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			if i+2 < len(s) && s[i+1] == 'u' && (s[i+2] == 'd' || s[i+2] == 'D') {
				return false
			}
			i++
		}
	}
	return true
}

// isInt32 reports whether a JSON number is a plain integer in int32 range.
func isInt32(v []byte) bool {
	if len(v) == 0 || len(v) > 11 {
		return false
	}
	s, neg := v, false
	if s[0] == '-' {
		s, neg = s[1:], true
	}
	if len(s) == 0 || (len(s) > 1 && s[0] == '0') {
		return false
	}
	var x int64
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return false
		}
		x = x*10 + int64(ch-'0')
	}
	if neg {
		x = -x
	}
	return x >= -1<<31 && x < 1<<31
}
