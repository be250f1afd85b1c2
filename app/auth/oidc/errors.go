package oidc

import (
	"errors"
	"regexp"

	"netmon/app/errs"
)

// ErrDisabled is the cause of the error that Begin and Finish return when
// SSO is off (Config.Issuer empty).
var ErrDisabled = errors.New("oidc: SSO is off")

// fail is what Begin and Finish return: an *errs.Error whose Msg is short
// and safe to show to the user and whose Err is the cause, for the log.
// Neither carries the client secret, the authorization code, a token or
// the login-state cookie: causes from the token exchange are reduced to
// their text, so that no *http.Request with the client's credentials hangs
// off the chain. Printing the error never shows the cause (errs.Error
// prints Msg only). A login the provider or the state refuses is
// Unauthorized; SSO off is NotFound; an unreachable provider Unavailable.
func fail(kind errs.Kind, msg string, cause error) *errs.Error {
	return &errs.Error{Kind: kind, Msg: msg, Err: cause}
}

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
