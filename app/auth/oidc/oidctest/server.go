// Package oidctest is a real OpenID provider for tests: an httptest TLS
// server speaking the wire format of discovery, JWKS, the authorization
// endpoint and the token endpoint (authorization code with PKCE S256), and
// issuing RS256 ID tokens signed with go-jose. It auto-approves every
// authorization request for the user set with SetUser, and can be told to
// misbehave (SetMisbehaviour) for negative tests.
//
// It serves the tests of app/auth/oidc and the hub's integration tests; it
// imports no netmon package, so the binary never links it.
//
// Two clients come with it, both trusting its TLS certificate: HTTPClient
// for the hub's back channel (put it in the context with
// oidc.ClientContext), and NewBrowser, a cookie-keeping client that follows
// redirects like a browser through hub and provider.
package oidctest

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// User is the user who "logs in" at the next authorization request. Empty
// fields are left out of the ID token; nil Groups or Roles too.
type User struct {
	Subject           string
	Email             string
	PreferredUsername string
	Name              string
	Groups            []string
	Roles             []string
	// Extra claims are added to the ID token last, replacing any claim of
	// the same name (for example "roles": "netops", a single string).
	Extra map[string]any
}

// Misbehaviour makes the provider break the protocol in one way, for
// negative tests. The zero value is a correct provider.
type Misbehaviour struct {
	WrongNonce       bool // the ID token's nonce differs from the one asked for
	WrongAudience    bool // aud is another client
	WrongIssuer      bool // iss is another issuer (discovery stays right)
	Expired          bool // exp has passed
	SignWithOtherKey bool // signed by a key not in the JWKS, under the published kid
	ProviderError    bool // /authorize redirects back with error=access_denied
	DiscoveryDown    bool // the discovery document answers 503
}

// Server is the provider. Create it with NewServer.
type Server struct {
	// ClientID is the only client the provider knows; "netmon-test" by
	// default. Set it before the first request.
	ClientID string
	// ClientSecret authenticates that client at /token (client_secret_basic
	// or client_secret_post); random by default. Set it before the first
	// request.
	ClientSecret string

	srv   *httptest.Server
	key   *rsa.PrivateKey
	kid   string
	clock func() time.Time

	mu       sync.Mutex
	user     User
	mis      Misbehaviour
	codes    map[string]grant
	otherKey *rsa.PrivateKey
	tokens   int // successful token responses
}

// grant is an issued authorization code.
type grant struct {
	clientID    string
	redirectURI string
	challenge   string
	nonce       string
	user        User
	expires     time.Time
}

// codeTTL is how long an authorization code may wait for /token.
const codeTTL = time.Minute

// NewServer starts a provider with a fresh 2048-bit RSA signing key and a
// default user (subject "user-1", alice); t.Cleanup closes it.
func NewServer(t testing.TB) *Server {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("oidctest: generate key: %v", err)
	}
	s := &Server{
		ClientID:     "netmon-test",
		ClientSecret: rand.Text(),
		key:          key,
		kid:          "k1-" + rand.Text()[:8],
		clock:        time.Now,
		codes:        map[string]grant{},
		user: User{
			Subject:           "user-1",
			Email:             "alice@example.com",
			PreferredUsername: "alice",
			Name:              "Alice Example",
		},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", s.discovery)
	mux.HandleFunc("GET /keys", s.jwks)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	s.srv = httptest.NewTLSServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// Issuer returns the issuer URL (https://127.0.0.1:port, no trailing slash).
func (s *Server) Issuer() string { return s.srv.URL }

// HTTPClient returns a client that trusts the provider's certificate, for
// the relying party's back channel (discovery, /token, JWKS).
func (s *Server) HTTPClient() *http.Client { return s.srv.Client() }

// NewBrowser returns a new browser-like client: its own cookie jar,
// redirects followed, the provider's certificate trusted. A GET of the
// hub's login route then runs the whole login, and the response's
// Request.URL is the callback URL the browser was sent to.
func (s *Server) NewBrowser() *http.Client {
	jar, _ := cookiejar.New(nil) // never fails without options
	return &http.Client{Transport: s.srv.Client().Transport, Jar: jar, Timeout: 30 * time.Second}
}

// SetUser sets the user who logs in at the next authorization request.
func (s *Server) SetUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user = u
}

// SetMisbehaviour sets how the provider misbehaves from the next request on.
func (s *Server) SetMisbehaviour(m Misbehaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mis = m
}

// TokensIssued returns how many token responses the provider has sent.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokens
}

func (s *Server) misbehaviour() Misbehaviour {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mis
}
