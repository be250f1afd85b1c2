package api

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
	"time"

	"github.com/gin-gonic/gin"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"netmon/app/errs"
)

// Perm is the access class of a route: the auth column of spec section 4,
// with the permission names of section 5.
type Perm string

// The access classes of spec sections 4 and 5.
const (
	Public      Perm = "P"            // no authentication
	Session     Perm = "S"            // any authenticated identity
	View        Perm = "view"         // permission "view"
	Operate     Perm = "operate"      // capture and recording control
	Analyze     Perm = "analyze"      // AI and reports
	Devices     Perm = "devices"      // add/delete devices
	Agents      Perm = "agents"       // delete agents
	Admin       Perm = "admin"        // users, tokens, audit
	GlobalAdmin Perm = "global-admin" // AI provider management (multi-site)
	Agent       Perm = "AG"           // agent bearer token or client certificate
	Enroll      Perm = "EN"           // X-Enroll-Token header
)

// Route is one row of the route table: everything the router and the
// OpenAPI document need to know about an endpoint, declared once.
type Route struct {
	Method      string // HTTP method
	Path        string // OpenAPI path template, e.g. /api/v1/users/{id}
	OperationID string // unique, lowerCamelCase
	Summary     string // one line for the docs
	Description string // optional longer text (CommonMark)
	Tag         string // group in the docs
	Perm        Perm   // who may call it
	Do          Endpoint
	// Errors documents the error statuses the handler itself gives (the
	// binder's 400/413/415 and the 401/403 of the permission check are
	// added automatically), each with the ErrorBody schema.
	Errors map[int]string
	// BodyLimit overrides the server's request body limit (bytes; 0 = the
	// server's), for routes whose bodies are much smaller or larger.
	BodyLimit int64
	// BodyTimeout overrides how long the client may take to send the body
	// (0 = the server's, 5 s), for routes whose bodies are large.
	BodyTimeout time.Duration
}

// Endpoint is a handler together with the types it reads and writes. It is
// built by JSON or Raw, never by hand, so the document cannot drift from
// what the handler binds.
type Endpoint struct {
	in        *binder      // parameters and body; nil binder means none
	out       reflect.Type // JSON success body (JSON endpoints)
	status    int          // success status (JSON endpoints)
	responses []Response   // declared responses (Raw endpoints)
	handler   func(s *Server) gin.HandlerFunc
}

// Response declares one response of a Raw endpoint for the document.
type Response struct {
	Status      int
	ContentType string
	Description string
	Body        any // a value of the body's Go type for JSON; nil for text or binary
}

// NoInput is the input of an endpoint without parameters or body.
type NoInput struct{}

// JSON adapts a typed function to a route: In's tagged fields are bound
// from the path, the query and the JSON body (see binder), the result is
// written as JSON with status 200, and errors go through writeError.
func JSON[In, Out any](fn func(c *gin.Context, in *In) (Out, error)) Endpoint {
	b := mustBinder(reflect.TypeFor[In]())
	return Endpoint{
		in:     b,
		out:    reflect.TypeFor[Out](),
		status: http.StatusOK,
		handler: func(s *Server) gin.HandlerFunc {
			return func(c *gin.Context) {
				var in In
				if err := b.bind(c, reflect.ValueOf(&in).Elem()); err != nil {
					s.writeError(c, err)
					return
				}
				out, err := fn(c, &in)
				if err != nil {
					s.writeError(c, err)
					return
				}
				c.JSON(http.StatusOK, out)
			}
		},
	}
}

// Raw adapts a handler that writes its own response (probes, files,
// streams, documents), declaring the responses it can give.
func Raw(h gin.HandlerFunc, responses ...Response) Endpoint {
	return Endpoint{
		handler:   func(*Server) gin.HandlerFunc { return h },
		responses: responses,
	}
}

// RawIn is Raw for a handler that takes bound, validated parameters (a
// file download with a query parameter): In is bound as for JSON, and
// documented.
func RawIn[In any](fn func(c *gin.Context, in *In), responses ...Response) Endpoint {
	b := mustBinder(reflect.TypeFor[In]())
	return Endpoint{
		in:        b,
		responses: responses,
		handler: func(s *Server) gin.HandlerFunc {
			return func(c *gin.Context) {
				var in In
				if err := b.bind(c, reflect.ValueOf(&in).Elem()); err != nil {
					s.writeError(c, err)
					return
				}
				fn(c, &in)
			}
		},
	}
}

// decodeBody reads the request body as JSON into v.
func decodeBody(c *gin.Context, v reflect.Value) error {
	if ct := c.GetHeader("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return Errorf(http.StatusUnsupportedMediaType, "request body: Content-Type must be application/json, got %q", ct)
		}
	}
	raw, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return Errorf(http.StatusRequestTimeout, "request body: not received in time")
		}
		return Errorf(http.StatusBadRequest, "request body: %v", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return Errorf(http.StatusBadRequest, "request body: empty; a JSON object is required")
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), bodyOptions)
	if err := jsonv2.UnmarshalDecode(dec, v.Addr().Interface(), bodyOptions); err != nil {
		return bodyError(err)
	}
	// Anything but white space after the value is refused: "{...}garbage"
	// is not a JSON document, and a parser that stops early disagrees with
	// one that does not about what the body said.
	if len(bytes.TrimSpace(raw[dec.InputOffset():])) != 0 {
		return Errorf(http.StatusBadRequest, "request body: unexpected data after the JSON value")
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

// bodyError turns a decoding error into the API's 400 message.
func bodyError(err error) error {
	// A field's own decoder may refuse with a typed error (the telemetry
	// connection limit, 413): that, not a type mismatch, is the answer.
	var kindErr *errs.Error
	if errors.As(err, &kindErr) {
		return kindErr
	}
	// Semantic errors get a message of ours: json/v2 words its own
	// "cannot" or "unable to" at random, so that nobody depends on it.
	var semErr *jsonv2.SemanticError
	if errors.As(err, &semErr) && semErr.GoType != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		var synErr *jsontext.SyntacticError
		if !errors.As(err, &synErr) {
			if semErr.JSONPointer == "" {
				return Errorf(http.StatusBadRequest, "request body: must be %s", jsonKind(semErr.GoType))
			}
			field := strings.ReplaceAll(strings.TrimPrefix(string(semErr.JSONPointer), "/"), "/", ".")
			return Errorf(http.StatusBadRequest, "request body: field %q must be %s", field, jsonKind(semErr.GoType))
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return Errorf(http.StatusBadRequest, "request body: invalid JSON: unexpected EOF")
	}
	msg := err.Error()
	for _, p := range []string{"json: ", "jsontext: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return Errorf(http.StatusBadRequest, "request body: invalid JSON: %s", msg)
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
