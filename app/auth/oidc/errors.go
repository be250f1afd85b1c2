package oidc

import (
	"errors"
	"regexp"
)

// ErrDisabled is the cause of the *Error that Begin and Finish return when
// SSO is off (Config.Issuer empty).
var ErrDisabled = errors.New("oidc: SSO is off")

// Error is what Begin and Finish return. Msg is short and safe to show to
// the user; Err is the cause, for the log. Neither carries the client
// secret, the authorization code, a token or the login-state cookie: causes
// from the token exchange are reduced to their text, so that no
// *http.Request with the client's credentials hangs off the chain.
type Error struct {
	Msg string
	Err error
}

// Error returns Msg, so that printing the error never shows the cause.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func fail(msg string, cause error) *Error { return &Error{Msg: msg, Err: cause} }

// Causes the tests (and a caller's log) can tell apart behind the one
// message a user sees for a stale or forged login state.
var (
	errNoCookie     = errors.New("login-state cookie missing")
	errBadCookie    = errors.New("login-state cookie does not open")
	errStateExpired = errors.New("login state older than its lifetime")
	errStateDiffers = errors.New("state parameter differs from the cookie's")
)

// Messages shown to the user.
const (
	msgDisabled      = "SSO is not configured"
	msgDiscovery     = "SSO provider unreachable; try again later"
	msgInternal      = "SSO login failed; try again"
	msgStale         = "SSO login state missing or expired; start again"
	msgStateMismatch = "SSO state mismatch; start again"
	msgProviderError = "SSO provider refused the login"
	msgNoCode        = "SSO callback without authorization code"
	msgExchange      = "SSO code exchange failed"
	msgNoIDToken     = "SSO provider returned no ID token"
	msgRejected      = "SSO token rejected"
	msgNonce         = "SSO nonce mismatch"
)

// oauthCode matches the error codes of RFC 6749 and OpenID Connect
// (access_denied, invalid_grant, login_required, ...). Only such a code is
// put in a message: an error parameter is text from outside.
var oauthCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// withCode appends code to msg when it looks like an OAuth error code.
func withCode(msg, code string) string {
	if oauthCode.MatchString(code) {
		return msg + ": " + code
	}
	return msg
}
