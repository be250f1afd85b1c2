package hub

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"netmon/app/config"
	"netmon/store/storetest"
)

const authRequired = `{"error":"oturum gerekli","auth_required":true,"message":"session required"}`

func withPassword(pw string) func(*config.HubConfig) {
	return func(c *config.HubConfig) { c.Auth.Password = pw }
}

func TestAuthenticationOffIsOpenAsAdmin(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h := startTestHub(t, dsn, nil)
		c := h.client(t)
		c.call("GET", "/api/auth/status", nil).must(t, 200)
		if r := c.call("GET", "/api/auth/status", nil); r.body != `{"required":false,"authenticated":false,"sso":false,"multi_site":false,"exposed":true,"rbac_users":false,"bootstrap_password":false,"permissions":["view","operate","analyze","devices","agents","admin","audit","global-admin"],"read_only":false,"roles":["admin","netops","auditor","analyst","viewer"]}` {
			t.Errorf("status %s", r.body)
		}
		c.call("GET", "/api/v1/users", nil).must(t, 200)
		if !strings.Contains(h.logs.String(), "authentication is OFF") {
			t.Error("no warning that authentication is off")
		}
		// The first user turns authentication on.
		c.createUser("first", "first-pass-1", "admin", "")
		if r := c.call("GET", "/api/v1/users", nil); r.code != 401 || r.body != authRequired {
			t.Errorf("after the first user: %d %s", r.code, r.body)
		}
	})
}

func TestLoginSessionCookieAndLogout(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h := startTestHub(t, dsn, withPassword("bootstrap-secret-1"))
		c := h.client(t)
		for _, path := range []string{"/api/v1/users", "/api/v1/audit", "/metrics", "/api/v1/tokens"} {
			if r := c.call("GET", path, nil); r.code != 401 || r.body != authRequired {
				t.Errorf("GET %s without a session: %d %s", path, r.code, r.body)
			}
		}
		// Public routes stay public.
		for _, path := range []string{"/healthz", "/api/auth/status", "/api/openapi.json", "/api/docs"} {
			c.call("GET", path, nil).must(t, 200)
		}
		if r := c.call("GET", "/api/auth/status", nil); r.body != `{"required":true,"authenticated":false,"sso":false,"multi_site":false,"exposed":false,"rbac_users":false,"bootstrap_password":true,"permissions":[],"read_only":false,"roles":["admin","netops","auditor","analyst","viewer"]}` {
			t.Errorf("status %s", r.body)
		}

		r := c.call("POST", "/api/login", map[string]string{"password": "wrong-password"})
		if r.code != 401 || r.body != `{"error":"invalid credentials"}` {
			t.Errorf("wrong password: %d %s", r.code, r.body)
		}
		r = c.call("POST", "/api/login", map[string]string{"password": "bootstrap-secret-1"}).must(t, 200)
		var out struct {
			OK    bool   `json:"ok"`
			Token string `json:"token"`
		}
		r.decode(t, &out)
		if !out.OK || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(out.Token) {
			t.Fatalf("login body %s", r.body)
		}
		set := r.header.Get("Set-Cookie")
		want := "nm_session=" + out.Token + "; Path=/; Max-Age=604800; HttpOnly; SameSite=Lax"
		if set != want {
			t.Errorf("Set-Cookie %q, want %q", set, want)
		}

		// The cookie and the bearer both work.
		cookie := h.client(t)
		cookie.cookie = out.Token
		cookie.call("GET", "/api/v1/users", nil).must(t, 200)
		bearer := h.client(t)
		bearer.bearer = out.Token
		bearer.call("GET", "/api/v1/users", nil).must(t, 200)
		if r := bearer.call("GET", "/api/auth/status", nil); !strings.Contains(r.body, `"authenticated":true`) || !strings.Contains(r.body, `"actor_type":"legacy"`) {
			t.Errorf("status %s", r.body)
		}

		// A new login replaces the session the browser still had.
		second := cookie.login("", "bootstrap-secret-1")
		if second == out.Token {
			t.Fatal("the session id did not change at login")
		}
		bearer.call("GET", "/api/v1/users", nil).must(t, 401)

		// Logout ends the session at once and clears the cookie.
		r = cookie.call("POST", "/api/logout", nil).must(t, 200)
		if r.body != `{"ok":true}` || !strings.HasPrefix(r.header.Get("Set-Cookie"), "nm_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax") {
			t.Errorf("logout: %s %q", r.body, r.header.Get("Set-Cookie"))
		}
		if r := cookie.call("GET", "/api/v1/users", nil); r.code != 401 || r.body != authRequired {
			t.Errorf("after logout: %d %s", r.code, r.body)
		}
		// Garbage credentials are a 401 like none.
		junk := h.client(t)
		junk.bearer = "not-a-token"
		junk.call("GET", "/api/v1/users", nil).must(t, 401)
		junk.bearer = strings.Repeat("a", 64)
		junk.call("GET", "/api/v1/users", nil).must(t, 401)
	})
}

func TestSecureCookieBehindHTTPSPublicURL(t *testing.T) {
	h := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) {
		c.Auth.Password = "bootstrap-secret-1"
		c.Server.PublicURL = "https://netmon.example"
	})
	r := h.client(t).call("POST", "/api/login", map[string]string{"password": "bootstrap-secret-1"}).must(t, 200)
	if !strings.HasSuffix(r.header.Get("Set-Cookie"), "; HttpOnly; Secure; SameSite=Lax") {
		t.Errorf("Set-Cookie %q lacks Secure", r.header.Get("Set-Cookie"))
	}
}

func TestLoginThrottle(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h := startTestHub(t, dsn, withPassword("bootstrap-secret-1"))
		c := h.client(t)
		for i := range 5 {
			if r := c.call("POST", "/api/login", map[string]string{"password": fmt.Sprint("wrong-", i)}); r.code != 401 {
				t.Fatalf("attempt %d: %d %s", i+1, r.code, r.body)
			}
		}
		r := c.call("POST", "/api/login", map[string]string{"password": "bootstrap-secret-1"})
		if r.code != 429 || r.header.Get("Retry-After") != "60" || r.body != `{"error":"too many failed attempts from this address; try again in 60 seconds"}` {
			t.Fatalf("sixth attempt (right password): %d %q %s", r.code, r.header.Get("Retry-After"), r.body)
		}
		// X-Forwarded-For from an untrusted peer changes nothing (case 21).
		c.headers["X-Forwarded-For"] = "203.0.113.9"
		c.call("POST", "/api/login", map[string]string{"password": "bootstrap-secret-1"}).must(t, 429)
	})
}

func TestLoginThrottleConcurrentBurst(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h := startTestHub(t, dsn, withPassword("bootstrap-secret-1"))
		boot := h.client(t)
		boot.login("", "bootstrap-secret-1")
		boot.createUser("alice", "alice-pass-1", "viewer", "")
		boot.createUser("root", "root-pass-12", "admin", "")
		admin := h.client(t)
		admin.login("root", "root-pass-12")
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := h.client(t)
				r := c.call("POST", "/api/login", map[string]string{"username": "alice", "password": fmt.Sprint("guess-", i)})
				mu.Lock()
				codes[r.code]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if codes[401] > 5 || codes[401]+codes[429] != 50 {
			t.Fatalf("codes %v: want at most 5 password checks (401) and the rest 429", codes)
		}
		// Each evaluated failure is audited; the refused ones are only counted.
		var events []struct {
			Username string `json:"username"`
			Result   string `json:"result"`
		}
		admin.call("GET", "/api/v1/audit?action=login&result=error&actor=alice&limit=1000", nil).must(t, 200).decode(t, &events)
		if len(events) != codes[401] {
			t.Errorf("%d failed logins audited, %d evaluated", len(events), codes[401])
		}
	})
}

// TestTrustedProxy: X-Forwarded-For is believed only from a configured proxy.
func TestTrustedProxy(t *testing.T) {
	h := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) {
		c.Auth.Password = "bootstrap-secret-1"
		c.Server.TrustedProxies = []string{"127.0.0.1", "::1"}
	})
	c := h.client(t)
	c.headers["X-Forwarded-For"] = "198.51.100.1"
	for range 5 {
		c.call("POST", "/api/login", map[string]string{"password": "nope-nope"}).must(t, 401)
	}
	c.call("POST", "/api/login", map[string]string{"password": "bootstrap-secret-1"}).must(t, 429)
	// Another client address behind the same proxy is not blocked.
	c.headers["X-Forwarded-For"] = "198.51.100.2"
	c.call("POST", "/api/login", map[string]string{"password": "bootstrap-secret-1"}).must(t, 200)
	// An unparsable header falls back to the peer (127.0.0.1), which is open.
	c.headers["X-Forwarded-For"] = "not an address"
	c.call("POST", "/api/login", map[string]string{"password": "bootstrap-secret-1"}).must(t, 200)
}

func TestCSRF(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h := startTestHub(t, dsn, func(c *config.HubConfig) {
			c.Auth.Password = "bootstrap-secret-1"
			c.Server.PublicURL = "https://netmon.example"
		})
		c := h.client(t)
		tok := c.login("", "bootstrap-secret-1")
		tests := []struct {
			desc    string
			headers map[string]string
			bearer  bool
			want    int
		}{
			{"foreign Origin with the cookie", map[string]string{"Origin": "https://evil.example"}, false, 403},
			{"cross-site fetch metadata with the cookie", map[string]string{"Sec-Fetch-Site": "cross-site"}, false, 403},
			{"foreign Origin with a bearer", map[string]string{"Origin": "https://evil.example"}, true, 200},
			{"the public URL's origin", map[string]string{"Origin": "https://netmon.example"}, false, 200},
			{"same origin", map[string]string{"Sec-Fetch-Site": "same-origin"}, false, 200},
		}
		for i, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				cc := h.client(t)
				if tt.bearer {
					cc.bearer = tok
				} else {
					cc.cookie = tok
				}
				for k, v := range tt.headers {
					cc.headers[k] = v
				}
				r := cc.call("POST", "/api/v1/users", map[string]string{"username": fmt.Sprint("user", i), "password": "user-pass-12", "role": "viewer"})
				if r.code != tt.want {
					t.Fatalf("%d %s, want %d", r.code, r.body, tt.want)
				}
				if tt.want == 403 && !strings.Contains(r.body, "CSRF") {
					t.Errorf("body %s", r.body)
				}
			})
		}
		// Login from a foreign page is refused too (login CSRF).
		evil := h.client(t)
		evil.headers["Origin"] = "https://evil.example"
		evil.call("POST", "/api/login", map[string]string{"password": "bootstrap-secret-1"}).must(t, http.StatusForbidden)
	})
}
