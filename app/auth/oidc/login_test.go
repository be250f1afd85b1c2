package oidc

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/go-cmp/cmp"

	"netmon/app/auth/oidc/oidctest"
	"netmon/app/errs"
)

func TestLoginSuccess(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		user   oidctest.User
		want   Login // Issuer filled in by the test
	}{
		{
			name: "role from groups claim",
			user: oidctest.User{Subject: "u1", Email: "a@example.com", PreferredUsername: "alice", Name: "Alice",
				Groups: []string{"staff", "netmon-ops"}},
			want: Login{Subject: "u1", Username: "alice", Email: "a@example.com", Name: "Alice",
				Groups: []string{"staff", "netmon-ops"}, Role: "netops"},
		},
		{
			name: "role from roles claim (array)",
			user: oidctest.User{Subject: "u2", PreferredUsername: "bob", Roles: []string{"netmon-analysts"}},
			want: Login{Subject: "u2", Username: "bob", Groups: []string{"netmon-analysts"}, Role: "analyst"},
		},
		{
			name: "role from roles claim (single string)",
			user: oidctest.User{Subject: "u3", PreferredUsername: "carol", Extra: map[string]any{"roles": "netmon-admins"}},
			want: Login{Subject: "u3", Username: "carol", Groups: []string{"netmon-admins"}, Role: "admin"},
		},
		{
			name: "groups claim wins over roles claim",
			user: oidctest.User{Subject: "u4", PreferredUsername: "dan",
				Groups: []string{"netmon-analysts"}, Roles: []string{"netmon-admins"}},
			want: Login{Subject: "u4", Username: "dan", Groups: []string{"netmon-analysts"}, Role: "analyst"},
		},
		{
			name: "groups claim of another shape is ignored, roles used",
			user: oidctest.User{Subject: "u5", PreferredUsername: "eve", Roles: []string{"netmon-ops"},
				Extra: map[string]any{"groups": 42}},
			want: Login{Subject: "u5", Username: "eve", Groups: []string{"netmon-ops"}, Role: "netops"},
		},
		{
			name: "no group mapped: viewer",
			user: oidctest.User{Subject: "u6", PreferredUsername: "fay", Groups: []string{"staff", "NETMON-ADMINS"}},
			want: Login{Subject: "u6", Username: "fay", Groups: []string{"staff", "NETMON-ADMINS"}, Role: "viewer"},
		},
		{
			name:   "no group mapped: configured default role",
			mutate: func(c *Config) { c.DefaultRole = "analyst" },
			user:   oidctest.User{Subject: "u7", PreferredUsername: "gus"},
			want:   Login{Subject: "u7", Username: "gus", Role: "analyst"},
		},
		{
			name: "most privileged wins: global-admin",
			user: oidctest.User{Subject: "u8", PreferredUsername: "hal",
				Groups: []string{"netmon-analysts", "netmon-admins", "netmon-root", "netmon-site-x"}},
			want: Login{Subject: "u8", Username: "hal",
				Groups: []string{"netmon-analysts", "netmon-admins", "netmon-root", "netmon-site-x"}, Role: "global-admin"},
		},
		{
			name: "most privileged wins: site-admin over netops and analyst",
			user: oidctest.User{Subject: "u9", PreferredUsername: "ivy",
				Groups: []string{"netmon-ops", "netmon-site-x", "netmon-analysts"}},
			want: Login{Subject: "u9", Username: "ivy",
				Groups: []string{"netmon-ops", "netmon-site-x", "netmon-analysts"}, Role: "site-admin"},
		},
		{
			name:   "a mapping to an unknown role never outranks a known one",
			mutate: func(c *Config) { c.GroupRoles["typo"] = "superuser" },
			user:   oidctest.User{Subject: "u10", PreferredUsername: "jay", Groups: []string{"typo", "netmon-analysts"}},
			want:   Login{Subject: "u10", Username: "jay", Groups: []string{"typo", "netmon-analysts"}, Role: "analyst"},
		},
		{
			name: "several audiences, azp names us",
			user: oidctest.User{Subject: "u13", PreferredUsername: "lee",
				Extra: map[string]any{"aud": []string{"other-app", testClientID}, "azp": testClientID}},
			want: Login{Subject: "u13", Username: "lee", Role: "viewer"},
		},
		{
			name: "username falls back to email",
			user: oidctest.User{Subject: "u11", Email: "kim@example.com"},
			want: Login{Subject: "u11", Username: "kim@example.com", Email: "kim@example.com", Role: "viewer"},
		},
		{
			name: "username falls back to subject",
			user: oidctest.User{Subject: "u12"},
			want: Login{Subject: "u12", Username: "u12", Role: "viewer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.mutate)
			h.idp.SetUser(tt.user)
			got, _ := h.run(t, h.idp.NewBrowser())
			want := outcome{Status: http.StatusOK, Login: tt.want}
			want.Login.Issuer = h.idp.Issuer()
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("login (-got, +want):\n%s", diff)
			}
		})
	}
}

// Case 26 of RELIABILITY.md and the protocol's other ways to fail.
func TestLoginRefused(t *testing.T) {
	type drive func(t *testing.T, h *harness) outcome
	full := func(t *testing.T, h *harness) outcome {
		o, _ := h.run(t, h.idp.NewBrowser())
		return o
	}
	editQuery := func(edit func(url.Values)) drive {
		return func(t *testing.T, h *harness) outcome {
			b := h.idp.NewBrowser()
			u := h.start(t, b)
			q := u.Query()
			edit(q)
			u.RawQuery = q.Encode()
			return get(t, b, u)
		}
	}
	tests := []struct {
		name      string
		mis       oidctest.Misbehaviour
		user      *oidctest.User // nil: the provider's default user
		drive     drive
		wantMsg   string
		wantCause error // checked with errors.Is when set
	}{
		{
			name: "missing state cookie",
			drive: func(t *testing.T, h *harness) outcome {
				b := h.idp.NewBrowser()
				u := h.start(t, b)
				return get(t, &http.Client{Transport: b.Transport}, u) // no jar
			},
			wantMsg:   msgStale,
			wantCause: errNoCookie,
		},
		{
			name:      "wrong state",
			drive:     editQuery(func(q url.Values) { q.Set("state", "forged") }),
			wantMsg:   msgStateMismatch,
			wantCause: errStateDiffers,
		},
		{
			name:      "state parameter missing",
			drive:     editQuery(func(q url.Values) { q.Del("state") }),
			wantMsg:   msgStateMismatch,
			wantCause: errStateDiffers,
		},
		{
			name: "login CSRF: another browser's callback URL",
			drive: func(t *testing.T, h *harness) outcome {
				attacker := h.start(t, h.idp.NewBrowser())
				victim := h.idp.NewBrowser()
				h.start(t, victim) // the victim has a login of its own under way
				return get(t, victim, attacker)
			},
			wantMsg:   msgStateMismatch,
			wantCause: errStateDiffers,
		},
		{
			name: "expired state",
			drive: func(t *testing.T, h *harness) outcome {
				b := h.idp.NewBrowser()
				u := h.start(t, b)
				h.clock.advance(StateTTL + 1e9)
				return get(t, b, u)
			},
			wantMsg:   msgStale,
			wantCause: errStateExpired,
		},
		{
			name: "tampered cookie",
			drive: func(t *testing.T, h *harness) outcome {
				b := h.idp.NewBrowser()
				u := h.start(t, b)
				blob, err := base64.RawURLEncoding.DecodeString(h.stateCookie(t, b).Value)
				if err != nil {
					t.Fatal(err)
				}
				blob[len(blob)/2] ^= 1
				h.setStateCookie(b, base64.RawURLEncoding.EncodeToString(blob))
				return get(t, b, u)
			},
			wantMsg:   msgStale,
			wantCause: errBadCookie,
		},
		{
			name: "replayed callback: the cookie is single-use",
			drive: func(t *testing.T, h *harness) outcome {
				b := h.idp.NewBrowser()
				first, u := h.run(t, b)
				if first.Status != http.StatusOK {
					t.Fatalf("first callback: %+v", first)
				}
				return get(t, b, u)
			},
			wantMsg:   msgStale,
			wantCause: errNoCookie,
		},
		{
			name: "replayed code with the cookie put back: the code is single-use",
			drive: func(t *testing.T, h *harness) outcome {
				b := h.idp.NewBrowser()
				u := h.start(t, b)
				saved := h.stateCookie(t, b).Value
				if first := get(t, b, u); first.Status != http.StatusOK {
					t.Fatalf("first callback: %+v", first)
				}
				h.setStateCookie(b, saved)
				o := get(t, b, u)
				if n := h.idp.TokensIssued(); n != 1 {
					t.Errorf("provider issued %d tokens, want 1", n)
				}
				return o
			},
			wantMsg: msgExchange + ": invalid_grant",
		},
		{
			name:    "callback without code",
			drive:   editQuery(func(q url.Values) { q.Del("code") }),
			wantMsg: msgNoCode,
		},
		{
			name:    "provider error parameter",
			mis:     oidctest.Misbehaviour{ProviderError: true},
			drive:   full,
			wantMsg: msgProviderError + ": access_denied",
		},
		{
			name: "error parameter that is no OAuth code is not echoed",
			drive: editQuery(func(q url.Values) {
				q.Del("code")
				q.Set("error", "<img src=x onerror=alert(1)>")
			}),
			wantMsg: msgProviderError,
		},
		{
			name:    "nonce mismatch",
			mis:     oidctest.Misbehaviour{WrongNonce: true},
			drive:   full,
			wantMsg: msgNonce,
		},
		{
			name:    "wrong audience",
			mis:     oidctest.Misbehaviour{WrongAudience: true},
			drive:   full,
			wantMsg: msgRejected + ": wrong audience",
		},
		{
			name: "several audiences, azp missing",
			user: &oidctest.User{Subject: "u1",
				Extra: map[string]any{"aud": []string{testClientID, "other-app"}}},
			drive:   full,
			wantMsg: msgRejected + ": wrong audience",
		},
		{
			name:    "no subject",
			user:    &oidctest.User{Email: "nobody@example.com"},
			drive:   full,
			wantMsg: msgRejected + ": no subject",
		},
		{
			name:    "wrong issuer",
			mis:     oidctest.Misbehaviour{WrongIssuer: true},
			drive:   full,
			wantMsg: msgRejected + ": wrong issuer",
		},
		{
			name:    "expired ID token",
			mis:     oidctest.Misbehaviour{Expired: true},
			drive:   full,
			wantMsg: msgRejected + ": expired",
		},
		{
			name:    "signed by a key not in the JWKS",
			mis:     oidctest.Misbehaviour{SignWithOtherKey: true},
			drive:   full,
			wantMsg: msgRejected + ": bad signature",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.idp.SetMisbehaviour(tt.mis)
			if tt.user != nil {
				h.idp.SetUser(*tt.user)
			}
			got := tt.drive(t, h)
			want := outcome{Status: http.StatusUnauthorized, Error: tt.wantMsg}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("outcome (-got, +want):\n%s", diff)
			}
			if err := h.finishErr(); tt.wantCause != nil && !errors.Is(err, tt.wantCause) {
				t.Errorf("cause = %v, want %v", errors.Unwrap(err), tt.wantCause)
			}
			h.assertNoSecrets(t, got)
		})
	}
}

// Two users of one provider sharing an e-mail address stay two logins:
// the caller links on (issuer, subject), which differ (Grafana
// CVE-2023-3128 linked on the e-mail).
func TestSameEmailTwoSubjects(t *testing.T) {
	h := newHarness(t, nil)
	var got []outcome
	for _, sub := range []string{"owner-1", "intruder-2"} {
		h.idp.SetUser(oidctest.User{Subject: sub, Email: "admin@example.com", PreferredUsername: "admin"})
		o, _ := h.run(t, h.idp.NewBrowser())
		got = append(got, o)
	}
	login := func(sub string) outcome {
		return outcome{Status: http.StatusOK, Login: Login{
			Issuer: h.idp.Issuer(), Subject: sub, Username: "admin", Email: "admin@example.com", Role: "viewer",
		}}
	}
	want := []outcome{login("owner-1"), login("intruder-2")}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("logins (-got, +want):\n%s", diff)
	}
}

func TestBeginCookieAndAuthURL(t *testing.T) {
	h := newHarness(t, nil)
	c := *h.idp.NewBrowser()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(h.hub.URL + loginPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	type cookie struct {
		Name, Path       string
		MaxAge           int
		HttpOnly, Secure bool
		SameSite         http.SameSite
	}
	var got []cookie
	var value string
	for _, ck := range resp.Cookies() {
		got = append(got, cookie{ck.Name, ck.Path, ck.MaxAge, ck.HttpOnly, ck.Secure, ck.SameSite})
		value = ck.Value
	}
	want := []cookie{{Name: "nm_oidc", Path: "/api/auth/oidc", MaxAge: 600, HttpOnly: true, SameSite: http.SameSiteLaxMode}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Set-Cookie (-got, +want):\n%s", diff)
	}

	loc, err := resp.Location()
	if err != nil {
		t.Fatal(err)
	}
	q := loc.Query()
	for _, k := range []string{"state", "nonce", "code_challenge"} {
		if q.Get(k) == "" {
			t.Errorf("authorization URL has no %s", k)
		} else if blob, _ := base64.RawURLEncoding.DecodeString(value); strings.Contains(value, q.Get(k)) || bytes.Contains(blob, []byte(q.Get(k))) {
			t.Errorf("cookie carries %s in clear", k)
		}
	}
	gotQ := map[string]string{
		"endpoint":              loc.Scheme + "://" + loc.Host + loc.Path,
		"client_id":             q.Get("client_id"),
		"redirect_uri":          q.Get("redirect_uri"),
		"response_type":         q.Get("response_type"),
		"scope":                 q.Get("scope"),
		"code_challenge_method": q.Get("code_challenge_method"),
	}
	wantQ := map[string]string{
		"endpoint":              h.idp.Issuer() + "/authorize",
		"client_id":             h.idp.ClientID,
		"redirect_uri":          h.hub.URL + callbackPath,
		"response_type":         "code",
		"scope":                 "openid profile email groups", // groups: the provider lists it
		"code_challenge_method": "S256",
	}
	if diff := cmp.Diff(gotQ, wantQ); diff != "" {
		t.Errorf("authorization URL (-got, +want):\n%s", diff)
	}

	// The callback deletes the cookie with the same attributes.
	resp, err = c.Get(h.hub.URL + callbackPath + "?state=x&code=y")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got = nil
	for _, ck := range resp.Cookies() {
		got = append(got, cookie{ck.Name, ck.Path, ck.MaxAge, ck.HttpOnly, ck.Secure, ck.SameSite})
	}
	want[0].MaxAge = -1 // Max-Age=0
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Set-Cookie of the callback (-got, +want):\n%s", diff)
	}
}

// The cookie is Secure when the request came over TLS, or when the
// callback is https (TLS ended at a proxy in front of the hub).
func TestStateCookieSecure(t *testing.T) {
	idp := oidctest.NewServer(t)
	tests := []struct {
		name        string
		target      string
		redirectURL string
		want        bool
	}{
		{"plain request, http callback", "http://hub.example/api/auth/oidc/login", "http://hub.example/api/auth/oidc/callback", false},
		{"TLS request", "https://hub.example/api/auth/oidc/login", "http://hub.example/api/auth/oidc/callback", true},
		{"plain request behind a TLS proxy", "http://hub.example/api/auth/oidc/login", "https://hub.example/api/auth/oidc/callback", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(slog.New(slog.NewTextHandler(t.Output(), nil)), Config{
				Issuer: idp.Issuer(), ClientID: idp.ClientID, ClientSecret: idp.ClientSecret, RedirectURL: tt.redirectURL,
			}, Deps{Sealer: newTestSealer(t)})
			ctx := gooidc.ClientContext(context.Background(), idp.HTTPClient())
			for _, step := range []string{"Begin", "Finish"} {
				w := httptest.NewRecorder()
				r := httptest.NewRequest(http.MethodGet, tt.target, nil)
				if step == "Begin" {
					if _, err := p.Begin(ctx, w, r); err != nil {
						t.Fatal(err)
					}
				} else {
					_, _ = p.Finish(ctx, w, r) // fails (no cookie) but clears it
				}
				cs := w.Result().Cookies()
				if len(cs) != 1 || cs[0].Secure != tt.want {
					t.Errorf("%s: cookies %v, want one with Secure=%v", step, cs, tt.want)
				}
			}
		})
	}
}

func TestDisabled(t *testing.T) {
	p := New(slog.New(slog.NewTextHandler(t.Output(), nil)), DefaultConfig(), Deps{})
	if p.Enabled() {
		t.Error("Enabled() = true with no issuer")
	}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, callbackPath, nil)
	_, errBegin := p.Begin(context.Background(), w, r)
	_, errFinish := p.Finish(context.Background(), w, r)
	for _, err := range []error{errBegin, errFinish} {
		e, ok := errs.As(err)
		if !ok || !errors.Is(err, ErrDisabled) || e.Msg != msgDisabled || e.Kind != errs.NotFound {
			t.Errorf("err = %#v, want a NotFound *errs.Error %q wrapping ErrDisabled", err, msgDisabled)
		}
	}
	if len(w.Result().Cookies()) != 0 {
		t.Error("a disabled provider set a cookie")
	}
}

// A provider down when the hub starts (or at the first login) is not
// fatal: the next login discovers it again.
func TestDiscoveryRetried(t *testing.T) {
	h := newHarness(t, nil)
	h.idp.SetMisbehaviour(oidctest.Misbehaviour{DiscoveryDown: true})
	got, _ := h.run(t, h.idp.NewBrowser())
	if diff := cmp.Diff(got, outcome{Status: http.StatusBadGateway, Error: msgDiscovery}); diff != "" {
		t.Errorf("while down (-got, +want):\n%s", diff)
	}
	h.idp.SetMisbehaviour(oidctest.Misbehaviour{})
	got, _ = h.run(t, h.idp.NewBrowser())
	if got.Status != http.StatusOK || got.Login.Subject != "user-1" {
		t.Errorf("after recovery: %+v, want a login of user-1", got)
	}
}

// TestDepsHTTPClient: the provider reaches the IdP through Deps.HTTPClient
// (the hub's guarded client) whatever client the caller's context holds;
// without it, the context's client is used, and a context without one
// does not trust the test IdP's certificate.
func TestDepsHTTPClient(t *testing.T) {
	idp := oidctest.NewServer(t)
	cfg := Config{Issuer: idp.Issuer(), ClientID: idp.ClientID, ClientSecret: idp.ClientSecret, RedirectURL: "http://hub.example/api/auth/oidc/callback"}
	for _, tc := range []struct {
		desc   string
		client *http.Client
		ctx    context.Context
		ok     bool
	}{
		{"Deps client, bare context", idp.HTTPClient(), context.Background(), true},
		{"no Deps client, the context's", nil, gooidc.ClientContext(context.Background(), idp.HTTPClient()), true},
		{"no client trusting the IdP", nil, context.Background(), false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			p := New(slog.New(slog.NewTextHandler(t.Output(), nil)), cfg, Deps{Sealer: newTestSealer(t), HTTPClient: tc.client})
			w := httptest.NewRecorder()
			_, err := p.Begin(tc.ctx, w, httptest.NewRequest(http.MethodGet, "http://hub.example/api/auth/oidc/login", nil))
			if (err == nil) != tc.ok {
				t.Errorf("Begin: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
