package oidctest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
)

func (s *Server) discovery(w http.ResponseWriter, r *http.Request) {
	if s.misbehaviour().DiscoveryDown {
		http.Error(w, "provider down", http.StatusServiceUnavailable)
		return
	}
	iss := s.Issuer()
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                iss,
		"authorization_endpoint":                iss + "/authorize",
		"token_endpoint":                        iss + "/token",
		"jwks_uri":                              iss + "/keys",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"scopes_supported":                      []string{"openid", "profile", "email", "groups"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":      []string{"S256"},
		"grant_types_supported":                 []string{"authorization_code"},
		"claims_supported": []string{"iss", "sub", "aud", "exp", "iat", "nonce", "at_hash",
			"email", "email_verified", "preferred_username", "name", "groups", "roles"},
	})
}

func (s *Server) jwks(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{
		Key: &s.key.PublicKey, KeyID: s.kid, Algorithm: string(jose.RS256), Use: "sig",
	}}})
}

// authorize approves at once. Errors about the client or the redirect URI
// are shown on a page (RFC 6749 4.1.2.1 forbids redirecting to an
// unchecked URI); the others go back to the client as error parameters.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != s.ClientID {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || (redirect.Scheme != "http" && redirect.Scheme != "https") || redirect.Host == "" || redirect.Fragment != "" {
		http.Error(w, "invalid redirect_uri", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		params.Set("state", q.Get("state"))
		u := *redirect
		rq := u.Query()
		for k, v := range params {
			rq[k] = v
		}
		u.RawQuery = rq.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	fail := func(code, desc string) {
		back(url.Values{"error": {code}, "error_description": {desc}})
	}
	switch {
	case s.misbehaviour().ProviderError:
		fail("access_denied", "the user refused")
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "only code is supported")
	case q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "PKCE with S256 is required")
	case !slices.Contains(strings.Fields(q.Get("scope")), "openid"):
		fail("invalid_scope", "openid scope missing")
	default:
		code := rand.Text()
		s.mu.Lock()
		s.codes[code] = grant{
			clientID:    q.Get("client_id"),
			redirectURI: q.Get("redirect_uri"),
			challenge:   q.Get("code_challenge"),
			nonce:       q.Get("nonce"),
			user:        s.user,
			expires:     s.clock().Add(codeTTL),
		}
		s.mu.Unlock()
		back(url.Values{"code": {code}})
	}
}

// token redeems a code (RFC 6749 4.1.3, RFC 7636 4.6).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		// client_secret_basic form-encodes both before base64 (2.3.1).
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != s.ClientID || subtle.ConstantTimeCompare([]byte(secret), []byte(s.ClientSecret)) != 1 {
		if basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="oidctest"`)
		}
		tokenError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	if r.PostForm.Get("grant_type") != "authorization_code" {
		tokenError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	code := r.PostForm.Get("code")
	s.mu.Lock()
	g, ok := s.codes[code]
	delete(s.codes, code) // single use, even when what follows fails
	s.mu.Unlock()
	if !ok || s.clock().After(g.expires) || g.clientID != id || g.redirectURI != r.PostForm.Get("redirect_uri") {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(g.challenge)) != 1 {
		tokenError(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	access := rand.Text()
	idToken, err := s.idToken(g, access)
	if err != nil {
		tokenError(w, http.StatusInternalServerError, "server_error")
		return
	}
	s.mu.Lock()
	s.tokens++
	s.mu.Unlock()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access,
		"token_type":   "Bearer",
		"expires_in":   3600,
		"id_token":     idToken,
	})
}

func tokenError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away: nothing to do
}
