package router

import "netmon/app/errs"

// StatusError is a refusal at the HTTP layer that no service kind
// describes: a body that is not JSON (415) or that never arrived (408).
// Services never see it; app/api's writeError answers its status.
type StatusError struct {
	Status int
	Msg    string
}

// Error returns the message the client sees.
func (e *StatusError) Error() string { return e.Msg }

// TooLarge is the 413 of a body over limit bytes, worded the same whether
// the declared length or the bytes read gave it away.
func TooLarge(limit int64) *errs.Error {
	return errs.TooLargef("request body too large: the limit is %d bytes", limit)
}

// invalidParam is the 400 of a path or query parameter, naming it.
func invalidParam(in, name, format string, args ...any) error {
	e := errs.Invalidf("%s parameter %q"+format, append([]any{in, name}, args...)...)
	e.Field = name
	return e
}
