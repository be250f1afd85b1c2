package hub

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"netmon/app/config"
	"netmon/store/storetest"
)

// bootstrap starts a hub with the legacy password and returns a client
// signed in with it.
func bootstrap(t *testing.T, dsn string, mutate ...func(*config.HubConfig)) (*testHub, *client) {
	t.Helper()
	return bootstrapWith(t, dsn, nil, mutate...)
}

// bootstrapWith is bootstrap with an option (nil: none).
func bootstrapWith(t *testing.T, dsn string, opt Option, mutate ...func(*config.HubConfig)) (*testHub, *client) {
	t.Helper()
	h := startTestHubWith(t, dsn, func(c *config.HubConfig) {
		c.Auth.Password = "bootstrap-secret-1"
		for _, m := range mutate {
			m(c)
		}
	}, opt)
	c := h.client(t)
	c.login("", h.cfg.Auth.Password)
	return h, c
}

func TestUserRulesAndRBAC(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn)
		// Validation.
		for _, tt := range []struct {
			body map[string]string
			code int
			msg  string
		}{
			{map[string]string{"username": "short", "password": "1234567", "role": "viewer"}, 400, `{"error":"password must be at least 8 characters"}`},
			{map[string]string{"username": "x", "password": strings.Repeat("p", 73), "role": "viewer"}, 400, `{"error":"password must be at most 72 bytes"}`},
			{map[string]string{"username": "bad name", "password": "long-enough", "role": "viewer"}, 400, ""},
			{map[string]string{"username": "r", "password": "long-enough", "role": "root"}, 400, `{"error":"role must be one of admin, netops, auditor, analyst, viewer"}`},
			{map[string]string{"username": "s", "password": "long-enough", "role": "site-admin", "site": "a"}, 400, `{"error":"role must be one of admin, netops, auditor, analyst, viewer"}`},
		} {
			r := boot.call("POST", "/api/v1/users", tt.body)
			if r.code != tt.code || (tt.msg != "" && r.body != tt.msg) {
				t.Errorf("create %v: %d %s", tt.body, r.code, r.body)
			}
		}
		ids := map[string]int64{}
		for _, role := range []string{"viewer", "analyst", "netops", "admin"} {
			ids[role] = boot.createUser(role+"1", role+"-pass-1", role, "")
			if role == "viewer" { // names are case-insensitive
				boot.call("POST", "/api/v1/users", map[string]string{"username": "VIEWER1", "password": "whatever-1", "role": "viewer"}).must(t, 409)
			}
		}

		// The legacy password is a bootstrap: refused once an enabled admin exists...
		r := h.client(t).call("POST", "/api/login", map[string]string{"password": "bootstrap-secret-1"})
		if r.code != 401 || !strings.Contains(r.body, "RBAC is enabled") {
			t.Fatalf("legacy login with RBAC on: %d %s", r.code, r.body)
		}
		// ...and so is the session it opened.
		boot.call("GET", "/api/v1/users", nil).must(t, 401)

		clients := map[string]*client{}
		for role := range ids {
			c := h.client(t)
			c.login(role+"1", role+"-pass-1")
			clients[role] = c
		}
		// Section 5 item 7, on routes that exist now: admin-only user management.
		for role, c := range clients {
			r := c.call("GET", "/api/v1/users", nil)
			want := 403
			if role == "admin" {
				want = 200
			}
			if r.code != want {
				t.Errorf("%s GET /api/v1/users: %d, want %d", role, r.code, want)
			}
			if want == 403 && r.body != fmt.Sprintf(`{"error":"permission denied: this needs the admin permission, which the role %s lacks"}`, role) {
				t.Errorf("403 body %s", r.body)
			}
			c.call("GET", "/api/v1/agents", nil).must(t, 200) // S: any identity
			// /metrics: admins that are not site-bound only (issue 28 item 5).
			c.call("GET", "/metrics", nil).must(t, want)
		}
		admin := clients["admin"]
		var denied []struct {
			Username, Action, Target, Result string
		}
		admin.call("GET", "/api/v1/audit?result=denied", nil).must(t, 200).decode(t, &denied)
		// Three roles refused twice each: the user list and /metrics.
		targets := map[string]int{}
		for _, d := range denied {
			if d.Action == "access.denied" && d.Result == "denied" {
				targets[d.Target]++
			}
		}
		if len(denied) != 6 || targets["GET /api/v1/users"] != 3 || targets["GET /metrics"] != 3 {
			t.Errorf("denials audited: %+v", denied)
		}

		// Yourself and the last admin.
		me := ids["admin"]
		admin.call("PUT", fmt.Sprintf("/api/v1/users/%d", me), map[string]any{"enabled": false}).must(t, 403)
		admin.call("DELETE", fmt.Sprintf("/api/v1/users/%d", me), nil).must(t, 403)
		r = admin.call("PUT", fmt.Sprintf("/api/v1/users/%d", me), map[string]any{"role": "viewer"})
		if r.code != 409 || !strings.Contains(r.body, "last enabled admin") {
			t.Errorf("demoting the last admin: %d %s", r.code, r.body)
		}
		admin.call("PUT", "/api/v1/users/99999", map[string]any{"role": "viewer"}).must(t, 404)

		// A password change ends that user's sessions at once.
		viewer := clients["viewer"]
		viewer.call("GET", "/api/auth/status", nil).must(t, 200)
		admin.call("PUT", fmt.Sprintf("/api/v1/users/%d", ids["viewer"]), map[string]any{"password": "new-viewer-pass"}).must(t, 200)
		viewer.call("GET", "/metrics", nil).must(t, 401)
		viewer.login("viewer1", "new-viewer-pass")
		// Disabling ends them too, and the user cannot sign in.
		admin.call("PUT", fmt.Sprintf("/api/v1/users/%d", ids["viewer"]), map[string]any{"enabled": false}).must(t, 200)
		viewer.call("GET", "/metrics", nil).must(t, 401)
		h.client(t).call("POST", "/api/login", map[string]string{"username": "viewer1", "password": "new-viewer-pass"}).must(t, 401)
		// A role change applies to live sessions.
		netops := clients["netops"]
		admin.call("PUT", fmt.Sprintf("/api/v1/users/%d", ids["netops"]), map[string]any{"role": "admin"}).must(t, 200)
		netops.call("GET", "/api/v1/users", nil).must(t, 200)
		// With a second admin, the first can be deleted; then the legacy
		// password is still refused (an enabled admin remains).
		netops.call("DELETE", fmt.Sprintf("/api/v1/users/%d", me), nil).must(t, 200)
		admin.call("GET", "/api/v1/users", nil).must(t, 401)

		// Break-glass: when no enabled admin remains (here by the admin CLI's
		// database path), the legacy password works again.
		ctx := context.Background()
		if _, _, err := updateDirect(ctx, h, ids["netops"]); err != nil {
			t.Fatal(err)
		}
		var users []map[string]any
		h.client(t).call("GET", "/api/v1/users", nil).must(t, 401)
		glass := h.client(t)
		glass.login("", "bootstrap-secret-1")
		glass.call("GET", "/api/v1/users", nil).must(t, 200).decode(t, &users)
		for _, u := range users {
			for k := range u {
				if strings.Contains(k, "pass") || strings.Contains(k, "hash") {
					t.Errorf("user list exposes %q", k)
				}
			}
		}
	})
}
