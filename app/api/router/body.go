package router

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"reflect"
	"strings"

	"github.com/gin-gonic/gin"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"netmon/app/errs"
)

// decodeBody reads the request body as JSON into v.
func decodeBody(c *gin.Context, v reflect.Value) error {
	if ct := c.GetHeader("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return &StatusError{Status: http.StatusUnsupportedMediaType, Msg: fmt.Sprintf("request body: Content-Type must be application/json, got %q", ct)}
		}
	}
	raw, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return TooLarge(tooBig.Limit)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return &StatusError{Status: http.StatusRequestTimeout, Msg: "request body: not received in time"}
		}
		return errs.Invalidf("request body: %v", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return errs.Invalidf("request body: empty; a JSON object is required")
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), bodyOptions)
	if err := jsonv2.UnmarshalDecode(dec, v.Addr().Interface(), bodyOptions); err != nil {
		return bodyError(err)
	}
	// Anything but white space after the value is refused: "{...}garbage"
	// is not a JSON document, and a parser that stops early disagrees with
	// one that does not about what the body said.
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) != 0 {
		return errs.Invalidf("request body: unexpected data after the JSON value")
	}
	return nil
}

// bodyOptions decode request bodies with github.com/go-json-experiment/json
// (the future encoding/json/v2): three times faster than encoding/json with
// a quarter of its allocations, which was 40% of the hub's CPU under agent
// telemetry. Names match case-insensitively and invalid UTF-8 becomes
// U+FFFD, as encoding/json did; a name given twice is refused (encoding/json
// took the last, a parser differential an attacker can use).
var bodyOptions = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsontext.AllowInvalidUTF8(true))

// bodyError turns a decoding error into the API's 400 message. The cause
// stays attached (errs.Error.Err) for the log.
func bodyError(err error) error {
	// A field's own decoder may refuse with a typed error (the telemetry
	// connection limit, 413): that, not a type mismatch, is the answer.
	if e, ok := errs.As(err); ok {
		return e
	}
	// Semantic errors get a message of ours: json/v2 words its own
	// "cannot" or "unable to" at random, so that nobody depends on it.
	var semErr *jsonv2.SemanticError
	if errors.As(err, &semErr) && semErr.GoType != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		var synErr *jsontext.SyntacticError
		if !errors.As(err, &synErr) {
			if semErr.JSONPointer == "" {
				return invalidBody("", err, "request body: must be %s", jsonKind(semErr.GoType))
			}
			field := strings.ReplaceAll(strings.TrimPrefix(string(semErr.JSONPointer), "/"), "/", ".")
			return invalidBody(field, err, "request body: field %q must be %s", field, jsonKind(semErr.GoType))
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return invalidBody("", err, "request body: invalid JSON: unexpected EOF")
	}
	msg := err.Error()
	for _, p := range []string{"json: ", "jsontext: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return invalidBody("", err, "request body: invalid JSON: %s", msg)
}

// invalidBody is the Invalid error of a body that does not decode, naming
// the offending field (its dotted JSON path) when there is one.
func invalidBody(field string, cause error, format string, args ...any) error {
	e := errs.Invalidf(format, args...)
	e.Field, e.Err = field, cause
	return e
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return fmt.Sprintf("of type %s", t)
}
