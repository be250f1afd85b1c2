package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/errs"
)

// ErrorBody is the body of every API error except the authentication
// failure of spec section 7 (AuthErrorBody).
type ErrorBody struct {
	// Error says what went wrong in words a user can act on.
	Error string `json:"error" jsonschema:"description=what went wrong in words a user can act on"`
}

// AuthErrorBody is the body of a 401 on a protected route (spec section 7).
type AuthErrorBody struct {
	Error        string `json:"error" jsonschema:"enum=oturum gerekli"`
	AuthRequired bool   `json:"auth_required"`
	// Message is the English wording, added beside the spec's fields
	// (clients that compare the body to the spec's keep working).
	Message string `json:"message" jsonschema:"enum=session required"`
}

// defaultRetryAfter is the Retry-After of a throttled answer whose error
// names no time (spec: 60 seconds for every 429).
const defaultRetryAfter = 60 * time.Second

// internalMessage is all a client learns of a server fault.
const internalMessage = "internal server error; the hub log has the details under this request's X-Request-Id"

// statusOf maps the error kinds of app/errs to HTTP statuses: the one
// place a service's "what went wrong" becomes a status.
var statusOf = map[errs.Kind]int{
	errs.Invalid:      http.StatusBadRequest,
	errs.Unauthorized: http.StatusUnauthorized,
	errs.Forbidden:    http.StatusForbidden,
	errs.NotFound:     http.StatusNotFound,
	errs.Conflict:     http.StatusConflict,
	errs.TooLarge:     http.StatusRequestEntityTooLarge,
	errs.Throttled:    http.StatusTooManyRequests,
	errs.Unavailable:  http.StatusServiceUnavailable,
}

// writeError answers err as JSON: the one place that turns an error into a
// status and headers (Retry-After included). A 500, and a 5xx with a
// hidden cause, is logged once here with the request id, so handlers
// return errors and never log them.
// Any error that carries no kind is a 500 whose detail is logged, never
// sent.
func (s *Server) writeError(c *gin.Context, err error) {
	status, msg := http.StatusInternalServerError, internalMessage
	var httpErr *router.StatusError
	var tooBig *http.MaxBytesError
	switch {
	case errs.KindOf(err) != errs.Internal:
		e, _ := errs.As(err)
		status, msg = statusOf[e.Kind], e.Msg
	case errors.As(err, &httpErr):
		status, msg = httpErr.Status, httpErr.Msg
	case errors.As(err, &tooBig):
		status, msg = http.StatusRequestEntityTooLarge, router.TooLarge(tooBig.Limit).Msg
	}
	switch {
	case status == http.StatusTooManyRequests:
		c.Header("Retry-After", retryAfter(errs.RetryAfterOf(err, defaultRetryAfter)))
	case status == http.StatusServiceUnavailable:
		if d := errs.RetryAfterOf(err, 0); d > 0 {
			c.Header("Retry-After", retryAfter(d))
		}
	}
	switch e, _ := errs.As(err); {
	case status == http.StatusInternalServerError:
		s.log.ErrorContext(c, "request failed", "status", status, "error", errorDetail(err))
	case status > 500 && e != nil && e.Err != nil:
		// A dependency is down: its cause is for the log. A plain
		// "retry later" (a full queue) is already in the access log.
		s.log.WarnContext(c, "request failed", "status", status, "error", errorDetail(err))
	}
	c.AbortWithStatusJSON(status, ErrorBody{Error: msg})
}

// retryAfter is a Retry-After value: whole seconds, rounded up.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(int(math.Ceil(d.Seconds())))
}

// errorDetail is what the log says of err: its message and, for a kind
// with a hidden cause, the cause.
func errorDetail(err error) string {
	if e, ok := errs.As(err); ok && e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Msg, e.Err)
	}
	return err.Error()
}

// invalidField is an Invalid error about one parameter or field, whose
// message already names it.
func invalidField(field, format string, args ...any) error {
	e := errs.Invalidf(format, args...)
	e.Field = field
	return e
}
