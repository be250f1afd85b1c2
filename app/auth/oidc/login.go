package oidc

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"netmon/app/errs"
)

// Login is a verified SSO login. The caller links it to a netmon user by
// (Issuer, Subject) only: Email and Username are whatever the provider says
// and two users of one provider may share them.
type Login struct {
	Issuer   string   // the ID token's iss, equal to Config.Issuer
	Subject  string   // the ID token's sub: the user's stable id at the provider
	Username string   // preferred_username, else email, else subject
	Email    string   // the email claim, possibly empty, not proof of anything
	Name     string   // the name claim, possibly empty
	Groups   []string // the groups claim, else the roles claim
	Role     string   // the netmon role mapped from Groups through Config.GroupRoles
}

// ready refuses a call on a Provider that cannot run a login.
func (p *Provider) ready() error {
	switch {
	case !p.Enabled():
		return fail(errs.NotFound, msgDisabled, ErrDisabled)
	case p.cfg.ClientID == "":
		return fail(errs.Internal, msgInternal, errors.New("oidc client_id is not configured"))
	case p.sealer == nil:
		return fail(errs.Internal, msgInternal, errors.New("oidc provider has no sealer"))
	}
	return nil
}

// Begin starts a login: it makes state, nonce and a PKCE verifier (S256),
// stores them sealed in the cookie "nm_oidc" (HttpOnly, SameSite=Lax,
// Path=/api/auth/oidc, Max-Age=600, Secure when r.TLS != nil or when
// RedirectURL is https), and returns the provider's authorization URL, to
// which the caller redirects the browser. The discovery document is fetched
// on first use and cached; after a failure the next call tries again.
// Errors are *errs.Error (see fail).
func (p *Provider) Begin(ctx context.Context, w http.ResponseWriter, r *http.Request) (authURL string, err error) {
	ctx = p.withClient(ctx)
	if err := p.ready(); err != nil {
		return "", err
	}
	d, err := p.discover(ctx)
	if err != nil {
		return "", err
	}
	st := loginState{
		State:    rand.Text(),
		Nonce:    rand.Text(),
		Verifier: oauth2.GenerateVerifier(),
		Created:  p.now().Unix(),
	}
	value, err := p.sealState(st)
	if err != nil {
		return "", fail(errs.Internal, msgInternal, err)
	}
	http.SetCookie(w, p.stateCookie(r, value))
	return d.oauth.AuthCodeURL(st.State, gooidc.Nonce(st.Nonce), oauth2.S256ChallengeOption(st.Verifier)), nil
}

// Finish completes the callback. In order: the cookie is read and cleared
// (single use, whatever follows); it must open and be younger than
// StateTTL; the state query parameter must equal the cookie's (compared in
// constant time); an error parameter from the provider is reported; the
// code is exchanged with the PKCE verifier; the ID token is verified with
// go-oidc (signature against the provider's JWKS, issuer, audience =
// ClientID, expiry) and its nonce compared with the cookie's.
//
// The role comes from the groups claim, else the roles claim (an array of
// strings or a single string), mapped through GroupRoles; when several
// groups match the most privileged role wins (global-admin, admin,
// site-admin, netops, analyst, viewer); none gives DefaultRole.
//
// Errors are *errs.Error, whose Msg the caller may show (with a 401).
func (p *Provider) Finish(ctx context.Context, w http.ResponseWriter, r *http.Request) (Login, error) {
	ctx = p.withClient(ctx)
	if err := p.ready(); err != nil {
		return Login{}, err
	}
	st, err := p.takeState(w, r)
	if err != nil {
		return Login{}, err
	}

	q := r.URL.Query()
	if code := q.Get("error"); code != "" {
		return Login{}, fail(errs.Unauthorized, withCode(msgProviderError, code),
			fmt.Errorf("provider error %.64q: %.200q", code, q.Get("error_description")))
	}
	code := q.Get("code")
	if code == "" {
		return Login{}, fail(errs.Unauthorized, msgNoCode, nil)
	}

	d, err := p.discover(ctx)
	if err != nil {
		return Login{}, err
	}
	xctx, cancel := context.WithTimeout(ctx, outboundTimeout)
	defer cancel()
	tok, err := d.oauth.Exchange(xctx, code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		// Keep only the text: *oauth2.RetrieveError holds the token
		// request, whose Authorization header carries the client secret.
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return Login{}, fail(errs.Unauthorized, withCode(msgExchange, re.ErrorCode), errors.New(re.Error()))
		}
		return Login{}, fail(errs.Unauthorized, msgExchange, errors.New(err.Error()))
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return Login{}, fail(errs.Unauthorized, msgNoIDToken, nil)
	}
	idt, err := d.verifier.Verify(xctx, raw)
	if err != nil {
		return Login{}, fail(errs.Unauthorized, msgRejected+": "+rejection(err), err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(st.Nonce)) != 1 {
		return Login{}, fail(errs.Unauthorized, msgNonce, nil)
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return Login{}, fail(errs.Unauthorized, msgRejected+": access token hash mismatch", err)
		}
	}
	return p.login(idt)
}

// takeState reads the login-state cookie, clears it, and checks its age
// and the state parameter.
func (p *Provider) takeState(w http.ResponseWriter, r *http.Request) (loginState, error) {
	c, err := r.Cookie(CookieName)
	// Cleared whatever happens next: a state serves one callback only.
	http.SetCookie(w, p.stateCookie(r, ""))
	if err != nil || c.Value == "" {
		return loginState{}, fail(errs.Unauthorized, msgStale, errNoCookie)
	}
	st, err := p.openState(c.Value)
	if err != nil {
		return loginState{}, fail(errs.Unauthorized, msgStale, err)
	}
	// A state from the future is as suspect as a stale one.
	age := p.now().Sub(time.Unix(st.Created, 0))
	if age < -time.Minute || age > StateTTL {
		return loginState{}, fail(errs.Unauthorized, msgStale, errStateExpired)
	}
	if subtle.ConstantTimeCompare([]byte(r.URL.Query().Get("state")), []byte(st.State)) != 1 {
		return loginState{}, fail(errs.Unauthorized, msgStateMismatch, errStateDiffers)
	}
	return st, nil
}

// rejection names, in a few words, why go-oidc refused an ID token. It
// reads go-oidc's messages: should they change, the reason falls back to
// "invalid" and the tests notice.
func rejection(err error) string {
	var expired *gooidc.TokenExpiredError
	msg := err.Error()
	switch {
	case errors.As(err, &expired):
		return "expired"
	case strings.Contains(msg, "expected audience"):
		return "wrong audience"
	case strings.Contains(msg, "issued by a different provider"):
		return "wrong issuer"
	case strings.Contains(msg, "fetching keys"):
		return "provider keys unavailable"
	case strings.Contains(msg, "failed to verify signature"):
		return "bad signature"
	case strings.Contains(msg, "malformed jwt"):
		return "malformed token"
	}
	return "invalid"
}
