package fwrest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"unicode/utf8"
)

// Decoding of the monitor API's answers, defensively: the device (or
// anything answering at its address, api_verify_tls=false letting an
// on-path host in) is not trusted. Every shape is checked before it is
// read: an empty array, null, {}, a string where a number belongs, an
// object where an array belongs, numbers past their type, nesting past
// encoding/json's depth limit. A bad answer becomes that endpoint's
// error, never a panic and never a silent 0. The body is already capped
// (Config.MaxBody) and the request timed out (Config.Timeout); the
// decoders bound what one answer can make in memory (MaxRecords
// entries, maxVDOMs envelopes, names clipped to maxText bytes), and
// their errors never quote the body: the probe returns them to its
// caller, who may have pointed it at any HTTPS service.

const (
	// maxVDOMs bounds the envelopes of one answer (vdom=*): the largest
	// models hold 500 virtual domains.
	maxVDOMs = 1000
	// maxText clips a name, alias or version the device reports.
	maxText = 255
)

// DecodeError is an answer that is not the monitor API's. Its text is
// the driver's own (a classification), never the answer's.
type DecodeError struct {
	Path   string
	Reason string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: not a firewall API response: %s", e.Path, e.Reason)
}

// errTooMany marks a list cut at its bound.
var errTooMany = errors.New("too many entries")

// kindOf names a JSON token's kind for an error (never its value).
func kindOf(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '[':
			return "an array"
		case '{':
			return "an object"
		}
		return "a delimiter"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "an unknown value"
}

// classify turns a decoding error into a fixed text: the JSON library's
// own messages can quote a character or a number of the answer.
func classify(err error) string {
	var (
		te *json.UnmarshalTypeError
		se *json.SyntaxError
	)
	switch {
	case errors.Is(err, errTooMany):
		return err.Error()
	case errors.As(err, &te):
		got := te.Value
		if i := strings.IndexByte(got, ' '); i > 0 { // "number 1e400"
			got = got[:i]
		}
		field := te.Field
		if field == "" {
			field = "value"
		}
		return fmt.Sprintf("%s: want %s, got %s", field, typeWord(te.Type), article(got))
	case errors.As(err, &se):
		if strings.Contains(se.Error(), "exceeded max depth") {
			return "nested too deeply"
		}
		return fmt.Sprintf("malformed JSON at byte %d", se.Offset)
	case errors.Is(err, errWant):
		return err.Error()
	}
	if strings.Contains(err.Error(), "exceeded max depth") {
		return "nested too deeply"
	}
	return "malformed JSON"
}

// typeWord names what a Go type wants in JSON words.
func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another type"
}

// article puts the JSON library's kind word ("string", "number",
// "array"...) in the words of kindOf.
func article(kind string) string {
	switch kind {
	case "array", "object":
		return "an " + kind
	case "null":
		return kind
	case "string", "number", "bool":
		if kind == "bool" {
			kind = "boolean"
		}
		return "a " + kind
	}
	return "another value"
}

// errWant wraps the shape errors of open.
var errWant = errors.New("shape")

type shapeError struct{ msg string }

func (e shapeError) Error() string   { return e.msg }
func (e shapeError) Is(t error) bool { return t == errWant }

// open reads the first token of raw and checks it is the delimiter
// want ('[' or '{'); null is allowed when nullOK (nothing to read: ok
// false).
func open(raw json.RawMessage, want json.Delim, what string, nullOK bool) (*json.Decoder, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // a number token is a kind here, never a range error
	tok, err := dec.Token()
	if err != nil {
		if len(bytes.TrimSpace(raw)) == 0 {
			return nil, false, shapeError{what + ": missing"}
		}
		return nil, false, err
	}
	if tok == nil && nullOK {
		return nil, false, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		wantKind := "an object"
		if want == '[' {
			wantKind = "an array"
		}
		return nil, false, shapeError{fmt.Sprintf("%s: want %s, got %s", what, wantKind, kindOf(tok))}
	}
	return dec, true, nil
}

// eachElem calls f with each element of the array raw (null: none), at
// most limit of them; what names raw in errors.
func eachElem(raw json.RawMessage, limit int, what string, nullOK bool, f func(v json.RawMessage) error) error {
	dec, ok, err := open(raw, '[', what, nullOK)
	if err != nil || !ok {
		return err
	}
	for n := 0; dec.More(); n++ {
		if n == limit {
			return fmt.Errorf("%s: over %d entries: %w", what, limit, errTooMany)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if err := f(v); err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing bracket: a truncated array is an error
	return err
}

// eachMember calls f with each member of the object raw (null: none),
// at most limit of them.
func eachMember(raw json.RawMessage, limit int, what string, nullOK bool, f func(key string, v json.RawMessage) error) error {
	dec, ok, err := open(raw, '{', what, nullOK)
	if err != nil || !ok {
		return err
	}
	for n := 0; dec.More(); n++ {
		if n == limit {
			return fmt.Errorf("%s: over %d entries: %w", what, limit, errTooMany)
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if err := f(key, v); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// object decodes raw, which must be a JSON object, into v.
func object(raw json.RawMessage, what string, v any) error {
	if _, _, err := open(raw, '{', what, false); err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// decodeEnvelopes reads one envelope or a non-empty array of them
// (vdom=*), each an object whose status is "success" and which carries
// results. Errors are *DecodeError (without the path: get adds it).
func decodeEnvelopes(body []byte) ([]envelope, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var envs []envelope
		err := eachElem(trimmed, maxVDOMs, "answer", false, func(v json.RawMessage) error {
			e, err := decodeEnvelope(v)
			if err == nil {
				envs = append(envs, e)
			}
			return err
		})
		if err != nil {
			return nil, &DecodeError{Reason: classify(err)}
		}
		if len(envs) == 0 {
			return nil, &DecodeError{Reason: "an empty array (no virtual domain answered)"}
		}
		return envs, nil
	}
	e, err := decodeEnvelope(trimmed)
	if err != nil {
		return nil, &DecodeError{Reason: classify(err)}
	}
	return []envelope{e}, nil
}

func decodeEnvelope(raw json.RawMessage) (envelope, error) {
	var e envelope
	if err := object(raw, "answer", &e); err != nil {
		return envelope{}, err
	}
	if e.Status != "success" {
		if e.Status == "" {
			return envelope{}, shapeError{`no status "success"`}
		}
		// The device's own word is not echoed: it could be anything.
		return envelope{}, shapeError{`the device answered a status other than "success"`}
	}
	if len(e.Results) == 0 {
		return envelope{}, shapeError{"no results"}
	}
	e.VDOM, e.Version, e.Serial = clip(e.VDOM), clip(e.Version), clip(e.Serial)
	return e, nil
}

// clip bounds a device-reported text to maxText bytes of valid UTF-8.
func clip(s string) string {
	if len(s) > maxText {
		s = s[:maxText]
		for len(s) > 0 && !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// within is v when it is a finite number in [lo, hi], else false.
func within(v, lo, hi float64) bool {
	return !math.IsNaN(v) && v >= lo && v <= hi
}
