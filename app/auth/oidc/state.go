package oidc

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Sealer encrypts the short-lived login-state cookie; netmon's vault
// (AES-256-GCM with associated data) implements it. Open must fail on any
// blob that Seal did not make with the same associated data.
type Sealer interface {
	Seal(plaintext, associatedData []byte) ([]byte, error)
	Open(blob, associatedData []byte) ([]byte, error)
}

const (
	// CookieName is the name of the login-state cookie.
	CookieName = "nm_oidc"
	// CookiePath scopes the cookie to the two SSO routes.
	CookiePath = "/api/auth/oidc"
	// StateTTL is how long a started login may take: the cookie's Max-Age,
	// and the age past which Finish refuses the sealed state even if a
	// client kept the cookie longer.
	StateTTL = 10 * time.Minute
)

// loginState is what Begin hands to Finish through the browser, sealed: the
// three one-time secrets of the flow and when it started.
type loginState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Created  int64  `json:"t"` // Unix seconds
}

// associatedData binds a sealed state to this use and this provider and
// client, so that a blob sealed for anything else does not open here.
func (p *Provider) associatedData() []byte {
	return []byte("netmon oidc login state v1\x00" + p.cfg.Issuer + "\x00" + p.cfg.ClientID)
}

func (p *Provider) sealState(st loginState) (string, error) {
	plain, err := json.Marshal(st)
	if err != nil {
		return "", fmt.Errorf("encode login state: %w", err)
	}
	blob, err := p.sealer.Seal(plain, p.associatedData())
	if err != nil {
		return "", fmt.Errorf("seal login state: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(blob), nil
}

// openState reads the cookie's state; errBadCookie for anything that does
// not open, decode and carry all its fields.
func (p *Provider) openState(value string) (loginState, error) {
	var st loginState
	blob, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil {
		return st, errBadCookie
	}
	plain, err := p.sealer.Open(blob, p.associatedData())
	if err != nil {
		return st, errBadCookie
	}
	if err := json.Unmarshal(plain, &st); err != nil || st.State == "" || st.Nonce == "" || st.Verifier == "" {
		return loginState{}, errBadCookie
	}
	return st, nil
}

// stateCookie returns the cookie carrying value, or the one that deletes it
// when value is empty. Lax, not Strict: the callback is a top-level
// navigation coming from the provider's site, which Strict would strip.
func (p *Provider) stateCookie(r *http.Request, value string) *http.Cookie {
	c := &http.Cookie{
		Name:     CookieName,
		Value:    value,
		Path:     CookiePath,
		MaxAge:   int(StateTTL / time.Second),
		HttpOnly: true,
		Secure:   r.TLS != nil || p.httpsCallback,
		SameSite: http.SameSiteLaxMode,
	}
	if value == "" {
		c.MaxAge = -1 // Max-Age=0: delete now
	}
	return c
}
