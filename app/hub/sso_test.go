package hub

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"netmon/app/auth/oidc"
	"netmon/app/auth/oidc/oidctest"
	"netmon/app/config"
	"netmon/store/storetest"
)

// ssoHub starts a hub whose SSO provider is a real OpenID provider running
// in the test (discovery, JWKS, RS256 ID tokens, PKCE).
func ssoHub(t *testing.T, dsn string) (*testHub, *oidctest.Server) {
	t.Helper()
	idp := oidctest.NewServer(t)
	port := freePort(t)
	h := startTestHubWith(t, dsn, func(c *config.HubConfig) {
		c.Server.Port = port
		c.Auth.Password = "bootstrap-secret-1"
		c.Server.PublicURL = fmt.Sprintf("http://127.0.0.1:%d", port)
		c.OIDC = oidc.Config{
			Issuer: idp.Issuer(), ClientID: idp.ClientID, ClientSecret: idp.ClientSecret,
			GroupRoles: map[string]string{"noc": "netops", "secops": "analyst", "it-admins": "admin"}, DefaultRole: "viewer",
		}
	}, func(h *Hub) { h.outbound = idp.HTTPClient() })
	return h, idp
}

// freePort returns a port that was free a moment ago on all interfaces.
// It is chosen below Linux's ephemeral range (32768-60999): a port the
// kernel handed out for ":0" could be handed again to any client socket —
// the connection floods of other tests open tens of thousands — before
// the hub binds it.
func freePort(t testing.TB) int {
	t.Helper()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		ln.Close()
		return port
	}
	t.Fatal("no free port between 20000 and 32000")
	return 0
}

// browse runs the SSO login in a browser-like client and returns it with
// the final URL.
func browse(t *testing.T, h *testHub, idp *oidctest.Server) (*http.Client, string) {
	t.Helper()
	b := idp.NewBrowser()
	resp, err := b.Get(h.base + "/api/auth/oidc/login")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return b, resp.Request.URL.String()
}

func status(t *testing.T, b *http.Client, base string) string {
	t.Helper()
	resp, err := b.Get(base + "/api/auth/status")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return string(raw)
}

func TestSSOLogin(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, idp := ssoHub(t, dsn)
		c := h.client(t)
		if r := c.call("GET", "/api/auth/status", nil); !strings.Contains(r.body, `"sso":true`) {
			t.Errorf("status does not announce SSO: %s", r.body)
		}

		idp.SetUser(oidctest.User{Subject: "sub-1", Email: "erin@example.org", PreferredUsername: "Erin", Groups: []string{"staff", "noc"}})
		b, final := browse(t, h, idp)
		if final != h.base+"/" {
			t.Fatalf("landed on %s", final)
		}
		if st := status(t, b, h.base); !strings.Contains(st, `"authenticated":true`) || !strings.Contains(st, `"username":"erin"`) ||
			!strings.Contains(st, `"role":"netops"`) || !strings.Contains(st, `"actor_type":"oidc"`) {
			t.Fatalf("after SSO: %s", st)
		}

		// Same subject again, groups changed at the provider: same user, new role.
		idp.SetUser(oidctest.User{Subject: "sub-1", Email: "erin@example.org", PreferredUsername: "Erin", Groups: []string{"secops"}})
		b, _ = browse(t, h, idp)
		if st := status(t, b, h.base); !strings.Contains(st, `"username":"erin"`) || !strings.Contains(st, `"role":"analyst"`) {
			t.Fatalf("second SSO login: %s", st)
		}
		// Another subject with the same e-mail and name is another user:
		// accounts link on (issuer, subject) only.
		idp.SetUser(oidctest.User{Subject: "sub-2", Email: "erin@example.org", PreferredUsername: "Erin", Groups: []string{"it-admins"}})
		b, _ = browse(t, h, idp)
		if st := status(t, b, h.base); !strings.Contains(st, `"username":"erin-2"`) || !strings.Contains(st, `"role":"admin"`) {
			t.Fatalf("second subject: %s", st)
		}
		// No mapped group: default role.
		idp.SetUser(oidctest.User{Subject: "sub-3", Email: "frank@example.org"})
		b, _ = browse(t, h, idp)
		if st := status(t, b, h.base); !strings.Contains(st, `"username":"frank@example.org"`) || !strings.Contains(st, `"role":"viewer"`) {
			t.Fatalf("default role: %s", st)
		}
	})
}

func TestSSORefusals(t *testing.T) {
	h, idp := ssoHub(t, storetestSQLite(t))
	tests := []struct {
		desc string
		bad  oidctest.Misbehaviour
		want string
	}{
		{"wrong nonce", oidctest.Misbehaviour{WrongNonce: true}, "nonce"},
		{"wrong audience", oidctest.Misbehaviour{WrongAudience: true}, "audience"},
		{"expired token", oidctest.Misbehaviour{Expired: true}, "expired"},
		{"wrong issuer", oidctest.Misbehaviour{WrongIssuer: true}, "issuer"},
		{"unknown signing key", oidctest.Misbehaviour{SignWithOtherKey: true}, "signature"},
		{"provider refused", oidctest.Misbehaviour{ProviderError: true}, "access_denied"},
	}
	idp.SetUser(oidctest.User{Subject: "sub-x", PreferredUsername: "x"})
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			idp.SetMisbehaviour(tt.bad)
			defer idp.SetMisbehaviour(oidctest.Misbehaviour{})
			b, final := browse(t, h, idp)
			u, err := url.Parse(final)
			if err != nil || u.Path != "/login" {
				t.Fatalf("landed on %s", final)
			}
			if msg := u.Query().Get("sso_error"); !strings.Contains(strings.ToLower(msg), tt.want) {
				t.Errorf("sso_error %q, want it to mention %q", msg, tt.want)
			}
			if st := status(t, b, h.base); !strings.Contains(st, `"authenticated":false`) {
				t.Errorf("signed in despite %s: %s", tt.desc, st)
			}
		})
	}
	// A callback without the state cookie (forged or replayed link).
	r := h.client(t).call("GET", "/api/auth/oidc/callback?code=abc&state=def", nil)
	if r.code != 302 || !strings.Contains(r.header.Get("Location"), "/login?sso_error=") {
		t.Errorf("bare callback: %d %s", r.code, r.header.Get("Location"))
	}
}

func TestSSONotConfigured(t *testing.T) {
	h := startTestHub(t, storetestSQLite(t), nil)
	c := h.client(t)
	for _, p := range []string{"/api/auth/oidc/login", "/api/auth/oidc/callback"} {
		if r := c.call("GET", p, nil); r.code != 404 || r.body != `{"error":"SSO is not configured on this hub (YAML block oidc)"}` {
			t.Errorf("%s: %d %s", p, r.code, r.body)
		}
	}
}
