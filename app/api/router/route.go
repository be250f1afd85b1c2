package router

import (
	"net/http"
	"reflect"
	"time"

	"github.com/gin-gonic/gin"
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
	// Global marks a resource that covers every site (the audit chain,
	// compliance evidence and reviews, the ISMS registers, /metrics):
	// authorize refuses site-bound identities with 403 whatever their
	// role, so a site's admin cannot read or change what the other sites
	// share.
	Global bool
	// PermWhen relaxes or tightens Perm for one value of a query
	// parameter (GET /api/report: type=compliance needs view, the other
	// types analyze — spec 4.3). authorize applies it; the document
	// publishes it as x-netmon-permission-when.
	PermWhen *QueryPerm
	Do       Endpoint
	// Errors documents the error statuses the handler itself gives (the
	// binder's 400/413/415 and the 401/403 of the permission check are
	// added automatically), each with the ErrorBody schema.
	Errors map[int]string
	// BodyLimit overrides the server's request body limit (bytes; 0 = the
	// server's), for routes whose bodies are much smaller or larger.
	BodyLimit int64
	// FollowsClient exempts a state-changing route from the detached
	// context (app/api detach): its handler streams an answer that must
	// stop when the client goes away, and commits what it must (the
	// stored answer and its audit record) on a context of its own.
	FollowsClient bool
	// BodyTimeout overrides how long the client may take to send the body
	// (0 = the server's, 5 s), for routes whose bodies are large.
	BodyTimeout time.Duration
}

// QueryPerm is the permission of a route when the query parameter Param
// has the value Value.
type QueryPerm struct {
	Param string
	Value string
	Perm  Perm
}

// Endpoint is a handler together with the types it reads and writes. It is
// built by JSON or Raw, never by hand, so the document cannot drift from
// what the handler binds.
type Endpoint struct {
	in        *binder      // parameters and body; nil binder means none
	out       reflect.Type // JSON success body (JSON endpoints)
	status    int          // success status (JSON endpoints)
	responses []Response   // declared responses (Raw endpoints)
	handler   func(fail ErrorWriter) gin.HandlerFunc
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
// written as JSON with status 200, and errors go to the ErrorWriter given to Register.
func JSON[In, Out any](fn func(c *gin.Context, in *In) (Out, error)) Endpoint {
	b := mustBinder(reflect.TypeFor[In]())
	return Endpoint{
		in:     b,
		out:    reflect.TypeFor[Out](),
		status: http.StatusOK,
		handler: func(fail ErrorWriter) gin.HandlerFunc {
			return func(c *gin.Context) {
				var in In
				if err := b.bind(c, reflect.ValueOf(&in).Elem()); err != nil {
					fail(c, err)
					return
				}
				out, err := fn(handlerContext(c), &in)
				if err != nil {
					fail(c, err)
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
		handler: func(ErrorWriter) gin.HandlerFunc {
			return func(c *gin.Context) { h(handlerContext(c)) }
		},
		responses: responses,
	}
}

// RawIn is Raw for a handler that takes bound, validated parameters (a
// file download with a query parameter): In is bound as for JSON, and
// documented. An error it returns (before writing anything) is answered
// like a JSON endpoint's.
func RawIn[In any](fn func(c *gin.Context, in *In) error, responses ...Response) Endpoint {
	b := mustBinder(reflect.TypeFor[In]())
	return Endpoint{
		in:        b,
		responses: responses,
		handler: func(fail ErrorWriter) gin.HandlerFunc {
			return func(c *gin.Context) {
				var in In
				if err := b.bind(c, reflect.ValueOf(&in).Elem()); err != nil {
					fail(c, err)
					return
				}
				if err := fn(handlerContext(c), &in); err != nil {
					fail(c, err)
				}
			}
		},
	}
}

// handlerContext is the *gin.Context a handler receives: a copy of gin's
// pooled Context that writes to the same response. Handlers pass their c to
// the store as its context.Context, and the store outlives the handler:
// database/sql's Rows/Tx watchers and the SQLite driver's interrupt
// goroutine call Done and Err on it after the query returned, possibly
// after the handler returned. gin puts the pooled Context back and reuses it
// (reset, a new Request) for the next request, so those late reads raced
// with another request's writes, and could even see its context. gin
// documents Copy for a Context used outside the request's scope; the copy
// is never pooled, its Request is fixed, and with the engine's
// ContextWithFallback its Deadline/Done/Err/Value are the request's
// context's. Copy detaches the writer (nil) for goroutines; a handler
// writes the response itself (headers, cookies, files, streams), so the
// copy gets the request's writer back, which only the handler, while it
// runs, uses. Handlers do not set keys or errors for the middleware after
// them (those would land on the copy).
func handlerContext(c *gin.Context) *gin.Context {
	hc := c.Copy()
	hc.Writer = c.Writer
	return hc
}
