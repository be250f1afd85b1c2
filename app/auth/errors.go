package auth

import (
	"time"

	"netmon/app/errs"
)

// The auth service says what went wrong with the kinds of app/errs
// (invalid, unauthorized, forbidden, not found, conflict, throttled); the
// API alone turns them into statuses and the Retry-After header.

// Login failures. ErrBadCredentials deliberately does not say whether the
// name or the password was wrong.
var (
	ErrBadCredentials = errs.Unauthorizedf("invalid credentials")
	ErrLegacyDisabled = errs.Unauthorizedf("RBAC is enabled: the legacy password is disabled while an enabled admin user exists; sign in with a username and password")
	ErrThrottled      = errs.Throttledf(RetryAfterSeconds*time.Second, "too many failed attempts from this address; try again in 60 seconds")
)

// ErrUnauthenticated is returned by Authenticate for credentials that do
// not (or no longer) identify anyone.
var ErrUnauthenticated = errs.Unauthorizedf("invalid or expired session or token")

func notFound(what string) error { return errs.NotFoundf("%s not found", what) }

// invalidField is an Invalid error about one field of the request. The
// message already names the field in the spec's wording, so it is not
// prefixed (errs.InvalidField would).
func invalidField(field, format string, args ...any) error {
	e := errs.Invalidf(format, args...)
	e.Field = field
	return e
}
