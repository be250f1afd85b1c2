package api

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/auth"
	"netmon/app/errs"
)

// Error is an error with the HTTP status and the message the client sees.
// Handlers return it for every failure the caller can act on; any other
// error becomes a 500 whose detail is logged, never sent.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// Errorf returns an *Error with a formatted message.
func Errorf(status int, format string, args ...any) error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

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

// writeError answers err as JSON. A 5xx is logged once here with the
// request id, so handlers return errors and never log them themselves.
func (s *Server) writeError(c *gin.Context, err error) {
	var apiErr *Error
	var kindErr *errs.Error
	var tooBig *http.MaxBytesError
	if status := authStatus(err); status != 0 {
		c.AbortWithStatusJSON(status, ErrorBody{Error: err.Error()})
		return
	}
	switch {
	case errors.As(err, &apiErr):
		if apiErr.Status >= 500 {
			s.log.ErrorContext(c, "request failed", "status", apiErr.Status, "error", apiErr.Message)
		}
		c.AbortWithStatusJSON(apiErr.Status, ErrorBody{Error: apiErr.Message})
	case errors.As(err, &kindErr) && kindStatus[kindErr.Kind] != 0:
		// TODO(merge): the API helper's errs mapping replaces this
		// minimal one (the fleet's errors were its only users here).
		if kindErr.Kind == errs.Throttled {
			c.Header("Retry-After", strconv.Itoa(int(errs.RetryAfterOf(err, auth.RetryAfterSeconds*time.Second)/time.Second)))
		}
		c.AbortWithStatusJSON(kindStatus[kindErr.Kind], ErrorBody{Error: kindErr.Msg})
	case errors.As(err, &tooBig):
		c.AbortWithStatusJSON(http.StatusRequestEntityTooLarge, ErrorBody{Error: tooLargeMessage(tooBig.Limit)})
	default:
		s.log.ErrorContext(c, "request failed", "status", http.StatusInternalServerError, "error", err)
		c.AbortWithStatusJSON(http.StatusInternalServerError, ErrorBody{Error: "internal server error; the hub log has the details under this request's X-Request-Id"})
	}
}

// kindStatus maps the errs kinds to statuses.
var kindStatus = map[errs.Kind]int{
	errs.Invalid: http.StatusBadRequest, errs.Unauthorized: http.StatusUnauthorized, errs.Forbidden: http.StatusForbidden,
	errs.NotFound: http.StatusNotFound, errs.Conflict: http.StatusConflict, errs.TooLarge: http.StatusRequestEntityTooLarge,
	errs.Throttled: http.StatusTooManyRequests, errs.Unavailable: http.StatusServiceUnavailable,
}

// authStatus maps the user-facing errors of the auth service.
func authStatus(err error) int {
	switch auth.KindOf(err) {
	case auth.KindInvalid:
		return http.StatusBadRequest
	case auth.KindUnauthorized:
		return http.StatusUnauthorized
	case auth.KindForbidden:
		return http.StatusForbidden
	case auth.KindNotFound:
		return http.StatusNotFound
	case auth.KindConflict:
		return http.StatusConflict
	case auth.KindThrottled:
		return http.StatusTooManyRequests
	}
	return 0
}

func tooLargeMessage(limit int64) string {
	return fmt.Sprintf("request body too large: the limit is %d bytes", limit)
}
