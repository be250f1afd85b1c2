package oidc

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"

	"netmon/app/auth/oidc/oidctest"
	"netmon/app/errs"
)

// testSealer is AES-256-GCM with a random nonce in front, as the vault
// seals; the vault itself is not imported (it is a sibling leaf).
type testSealer struct{ aead cipher.AEAD }

func newTestSealer(t *testing.T) *testSealer {
	t.Helper()
	block, err := aes.NewCipher([]byte(rand.Text() + rand.Text())[:32])
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return &testSealer{aead}
}

func (s *testSealer) Seal(plain, ad []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, plain, ad), nil
}

func (s *testSealer) Open(blob, ad []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(blob) < n {
		return nil, errors.New("short blob")
	}
	return s.aead.Open(nil, blob[:n], blob[n:], ad)
}

// clock is a movable time.Now.
type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

// harness is a hub in miniature: the two SSO routes on an httptest
// server, as app/api mounts them, in front of an oidctest provider.
type harness struct {
	idp   *oidctest.Server
	p     *Provider
	clock *clock
	hub   *httptest.Server

	mu      sync.Mutex
	lastErr error    // of the last Finish
	secrets []string // code and cookie values the hub has seen
}

const (
	testClientID = "netmon-test-client"
	loginPath    = "/api/auth/oidc/login"
	callbackPath = "/api/auth/oidc/callback"
)

func testGroupRoles() map[string]string {
	return map[string]string{
		"netmon-root":     "global-admin",
		"netmon-admins":   "admin",
		"netmon-site-x":   "site-admin",
		"netmon-ops":      "netops",
		"netmon-analysts": "analyst",
	}
}

// newHarness starts provider and hub; mutate may change the hub's Config.
func newHarness(t *testing.T, mutate func(*Config)) *harness {
	t.Helper()
	h := &harness{idp: oidctest.NewServer(t), clock: &clock{}}
	h.idp.ClientID = testClientID
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+loginPath, h.login)
	mux.HandleFunc("GET "+callbackPath, h.callback)
	// Unstarted, so that the callback URL is known before the Provider is
	// made and the Provider is in place before the first request.
	h.hub = httptest.NewUnstartedServer(mux)
	cfg := Config{
		Issuer:       h.idp.Issuer(),
		ClientID:     h.idp.ClientID,
		ClientSecret: h.idp.ClientSecret,
		RedirectURL:  "http://" + h.hub.Listener.Addr().String() + callbackPath,
		GroupRoles:   testGroupRoles(),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	h.p = New(slog.New(slog.NewTextHandler(t.Output(), nil)), cfg, Deps{Sealer: newTestSealer(t)})
	h.p.now = h.clock.now
	h.hub.Start()
	t.Cleanup(h.hub.Close)
	return h
}

// backChannel is the context the hub's handlers pass: it carries the
// client that trusts the provider's certificate.
func (h *harness) backChannel(r *http.Request) *http.Request {
	return r.WithContext(gooidc.ClientContext(r.Context(), h.idp.HTTPClient()))
}

func (h *harness) login(w http.ResponseWriter, r *http.Request) {
	r = h.backChannel(r)
	u, err := h.p.Begin(r.Context(), w, r)
	if err != nil {
		writeError(w, http.StatusBadGateway, err)
		return
	}
	http.Redirect(w, r, u, http.StatusFound)
}

func (h *harness) callback(w http.ResponseWriter, r *http.Request) {
	r = h.backChannel(r)
	h.mu.Lock()
	if c := r.URL.Query().Get("code"); c != "" {
		h.secrets = append(h.secrets, c)
	}
	if c, err := r.Cookie(CookieName); err == nil {
		h.secrets = append(h.secrets, c.Value)
	}
	h.mu.Unlock()

	l, err := h.p.Finish(r.Context(), w, r)
	h.mu.Lock()
	h.lastErr = err
	h.mu.Unlock()
	if err != nil {
		writeError(w, http.StatusUnauthorized, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(l)
}

func writeError(w http.ResponseWriter, status int, err error) {
	e, ok := errs.As(err)
	if !ok {
		status, e = http.StatusInternalServerError, &errs.Error{Msg: "not an *errs.Error: " + err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": e.Msg})
}

func (h *harness) finishErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lastErr
}

// outcome is what the browser ends up with.
type outcome struct {
	Status int
	Login  Login
	Error  string
}

// run drives a whole login in browser b: one GET of the login route,
// redirects followed through provider and back. It returns the callback
// URL the browser was sent to.
func (h *harness) run(t *testing.T, b *http.Client) (outcome, *url.URL) {
	t.Helper()
	resp, err := b.Get(h.hub.URL + loginPath)
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	return readOutcome(t, resp), resp.Request.URL
}

// start drives a login up to the provider's redirect back to the hub and
// returns the callback URL, not yet fetched.
func (h *harness) start(t *testing.T, b *http.Client) *url.URL {
	t.Helper()
	c := *b
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Path == callbackPath {
			return http.ErrUseLastResponse
		}
		return nil
	}
	resp, err := c.Get(h.hub.URL + loginPath)
	if err != nil {
		t.Fatalf("start login: %v", err)
	}
	defer resp.Body.Close()
	u, err := resp.Location()
	if resp.StatusCode != http.StatusFound || err != nil || u.Path != callbackPath {
		t.Fatalf("start login: status %d, location %v (%v)", resp.StatusCode, u, err)
	}
	return u
}

// get fetches u in browser b.
func get(t *testing.T, b *http.Client, u *url.URL) outcome {
	t.Helper()
	resp, err := b.Get(u.String())
	if err != nil {
		t.Fatalf("GET %s: %v", u.Path, err)
	}
	return readOutcome(t, resp)
}

func readOutcome(t *testing.T, resp *http.Response) outcome {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	o := outcome{Status: resp.StatusCode}
	if resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(body, &o.Login)
	} else {
		var e struct{ Error string }
		err = json.Unmarshal(body, &e)
		o.Error = e.Error
	}
	if err != nil {
		t.Fatalf("status %d, body %q: %v", resp.StatusCode, body, err)
	}
	return o
}

// stateCookie returns browser b's login-state cookie for the hub.
func (h *harness) stateCookie(t *testing.T, b *http.Client) *http.Cookie {
	t.Helper()
	u, _ := url.Parse(h.hub.URL + callbackPath)
	for _, c := range b.Jar.Cookies(u) {
		if c.Name == CookieName {
			return c
		}
	}
	t.Fatal("no login-state cookie in the browser")
	return nil
}

// setStateCookie puts value as browser b's login-state cookie.
func (h *harness) setStateCookie(b *http.Client, value string) {
	u, _ := url.Parse(h.hub.URL + callbackPath)
	b.Jar.SetCookies(u, []*http.Cookie{{Name: CookieName, Value: value, Path: CookiePath}})
}

// assertNoSecrets checks that neither what the browser saw nor the error
// chain carries the client secret, a code or a cookie value.
func (h *harness) assertNoSecrets(t *testing.T, o outcome) {
	t.Helper()
	h.mu.Lock()
	secrets := append([]string{h.idp.ClientSecret}, h.secrets...)
	h.mu.Unlock()
	texts := []string{o.Error}
	for err := h.finishErr(); err != nil; err = errors.Unwrap(err) {
		texts = append(texts, err.Error())
	}
	for _, s := range secrets {
		for _, text := range texts {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("error text %q carries a secret", text)
			}
		}
	}
}
