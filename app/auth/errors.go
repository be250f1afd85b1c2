package auth

import (
	"errors"
	"fmt"
)

// Kind classifies an auth error for the API, which maps it to a status.
type Kind int

// The kinds.
const (
	KindInvalid      Kind = iota + 1 // 400: a bad request body or value
	KindUnauthorized                 // 401: bad credentials
	KindForbidden                    // 403: not allowed to do that
	KindNotFound                     // 404: no such object (or another site's)
	KindConflict                     // 409: name taken, last admin
	KindThrottled                    // 429: too many failures
)

// Error is an auth error whose message the caller may show to the user.
type Error struct {
	Kind Kind
	Msg  string
	// RetryAfter is the Retry-After of a KindThrottled error, in seconds
	// (0: RetryAfterSeconds).
	RetryAfter int
}

// RetryAfterOf is the Retry-After, in seconds, of a throttled error.
func RetryAfterOf(err error) int {
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > 0 {
		return e.RetryAfter
	}
	return RetryAfterSeconds
}

func (e *Error) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &Error{Kind: KindInvalid, Msg: fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) error {
	return &Error{Kind: KindForbidden, Msg: fmt.Sprintf(format, args...)}
}

func notFound(what string) error { return &Error{Kind: KindNotFound, Msg: what + " not found"} }

func conflict(format string, args ...any) error {
	return &Error{Kind: KindConflict, Msg: fmt.Sprintf(format, args...)}
}

// Login failures. ErrBadCredentials deliberately does not say whether the
// name or the password was wrong.
var (
	ErrBadCredentials = &Error{Kind: KindUnauthorized, Msg: "invalid credentials"}
	ErrLegacyDisabled = &Error{Kind: KindUnauthorized, Msg: "RBAC is enabled: the legacy password is disabled while an enabled admin user exists; sign in with a username and password"}
	ErrThrottled      = &Error{Kind: KindThrottled, Msg: "too many failed attempts from this address; try again in 60 seconds"}
)

// ErrUnauthenticated is returned by Authenticate for credentials that do
// not (or no longer) identify anyone.
var ErrUnauthenticated = errors.New("invalid or expired session or token")

// KindOf returns the kind of err, 0 for an unclassified (internal) error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}
