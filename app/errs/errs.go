// Package errs is the one error vocabulary of netmon's services: a small
// leaf (it imports nothing of ours) of typed kinds that a service returns
// and only the API turns into HTTP statuses and headers. Services never
// import net/http to say what went wrong; they say which kind it was.
//
// A service builds an error with one of the constructors (Invalid,
// NotFound, Conflict, Forbidden, Unauthorized, TooLarge, Throttled,
// Unavailable); callers branch with KindOf, Is or As. Any error that is
// not an *Error is internal: the API answers 500 and logs it.
package errs

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a failure the caller can act on.
type Kind int

// The kinds. Internal (the zero value) is every error that is not an
// *Error: a bug or a dependency failure the user cannot fix.
const (
	Internal     Kind = iota
	Invalid           // the request is malformed or a value is out of range (400)
	Unauthorized      // no credentials, or credentials that identify no one (401)
	Forbidden         // identified, but not allowed to do this (403)
	NotFound          // no such object, or one outside the caller's scope (404)
	Conflict          // the object's state forbids it: name taken, exhausted (409)
	TooLarge          // the request body is over its limit (413)
	Throttled         // too many attempts; RetryAfter says when to retry (429)
	Unavailable       // a dependency is down or full; retry later (503)
)

var kindNames = [...]string{"internal", "invalid", "unauthorized", "forbidden", "not found", "conflict", "too large", "throttled", "unavailable"}

// String names the kind.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("kind(%d)", int(k))
	}
	return kindNames[k]
}

// Error is a failure of a known kind with a message the user may see.
type Error struct {
	// Kind says what the API answers.
	Kind Kind
	// Msg is shown to the user as is: no secrets, no internals.
	Msg string
	// Field names the offending field of an Invalid error ("" = the
	// request as a whole).
	Field string
	// RetryAfter is when a Throttled or Unavailable request may be retried
	// (0 = the API's default).
	RetryAfter time.Duration
	// Err is the cause, for the log; it is never shown to the user.
	Err error
}

// Error returns the user-facing message.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error of the same kind and message, so
// that sentinel errors made with these constructors work with errors.Is.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Msg == e.Msg && t.Field == e.Field
}

func newf(k Kind, format string, args []any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// Invalidf is an Invalid error about the request as a whole.
func Invalidf(format string, args ...any) *Error { return newf(Invalid, format, args) }

// InvalidField is an Invalid error naming the offending field; the message
// is prefixed with it ("name: must not be empty").
func InvalidField(field, format string, args ...any) *Error {
	e := newf(Invalid, format, args)
	e.Field = field
	if field != "" {
		e.Msg = field + ": " + e.Msg
	}
	return e
}

// Unauthorizedf is an Unauthorized error.
func Unauthorizedf(format string, args ...any) *Error { return newf(Unauthorized, format, args) }

// Forbiddenf is a Forbidden error.
func Forbiddenf(format string, args ...any) *Error { return newf(Forbidden, format, args) }

// NotFoundf is a NotFound error.
func NotFoundf(format string, args ...any) *Error { return newf(NotFound, format, args) }

// Conflictf is a Conflict error.
func Conflictf(format string, args ...any) *Error { return newf(Conflict, format, args) }

// TooLargef is a TooLarge error.
func TooLargef(format string, args ...any) *Error { return newf(TooLarge, format, args) }

// Throttledf is a Throttled error to retry after retry (0 = the default).
func Throttledf(retry time.Duration, format string, args ...any) *Error {
	e := newf(Throttled, format, args)
	e.RetryAfter = retry
	return e
}

// Unavailablef is an Unavailable error to retry after retry (0 = none said).
func Unavailablef(retry time.Duration, format string, args ...any) *Error {
	e := newf(Unavailable, format, args)
	e.RetryAfter = retry
	return e
}

// Wrap returns e with cause attached for the log (a copy: e may be a
// shared sentinel).
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.Err = cause
	return &c
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// KindOf returns the kind of err: Internal for nil-free errors that carry
// no kind.
func KindOf(err error) Kind {
	if e, ok := As(err); ok {
		return e.Kind
	}
	return Internal
}

// RetryAfterOf returns the retry time of err, or def when it states none.
func RetryAfterOf(err error, def time.Duration) time.Duration {
	if e, ok := As(err); ok && e.RetryAfter > 0 {
		return e.RetryAfter
	}
	return def
}
