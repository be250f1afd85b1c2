package hub

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"netmon/app/config"
	"netmon/store/storetest"
)

func TestAPITokens(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn)
		var created struct {
			Token string `json:"token"`
			ID    int64  `json:"id"`
			Name  string `json:"name"`
			Role  string `json:"role"`
		}
		boot.call("POST", "/api/v1/tokens", map[string]string{"name": "grafana", "role": "viewer"}).must(t, 200).decode(t, &created)
		if !regexp.MustCompile(`^bnt_[0-9a-f]{64}$`).MatchString(created.Token) || created.Role != "viewer" {
			t.Fatalf("created %+v", created)
		}
		// The list never shows the token or its hash.
		r := boot.call("GET", "/api/v1/tokens", nil).must(t, 200)
		if strings.Contains(r.body, created.Token) || strings.Contains(r.body, created.Token[4:]) || strings.Contains(r.body, "hash") {
			t.Fatalf("token list leaks the secret: %s", r.body)
		}
		if !strings.Contains(r.body, `"name":"grafana"`) || !strings.Contains(r.body, `"last_used":0`) || !strings.Contains(r.body, `"created_by":"admin"`) {
			t.Errorf("list %s", r.body)
		}
		// Usable as a bearer with its role.
		tok := h.client(t)
		tok.bearer = created.Token
		tok.call("GET", "/api/v1/agents", nil).must(t, 200)
		// /metrics is for admins and the scrape token only (issue 28 item 5).
		tok.call("GET", "/metrics", nil).must(t, 403)
		tok.call("GET", "/api/v1/users", nil).must(t, 403)
		if r := boot.call("GET", "/api/v1/tokens", nil); !regexp.MustCompile(`"last_used":[1-9]`).MatchString(r.body) {
			t.Errorf("last_used not recorded: %s", r.body)
		}
		// Validation.
		boot.call("POST", "/api/v1/tokens", map[string]string{"name": "", "role": "viewer"}).must(t, 400)
		boot.call("POST", "/api/v1/tokens", map[string]string{"name": "x", "role": "god"}).must(t, 400)
		// Revoked at once.
		boot.call("DELETE", fmt.Sprintf("/api/v1/tokens/%d", created.ID), nil).must(t, 200)
		if r := tok.call("GET", "/metrics", nil); r.code != 401 || r.body != authRequired {
			t.Errorf("revoked token: %d %s", r.code, r.body)
		}
		boot.call("DELETE", fmt.Sprintf("/api/v1/tokens/%d", created.ID), nil).must(t, 404)
		// A token of a made-up value, and one with the prefix but unknown.
		tok.bearer = "bnt_" + strings.Repeat("0", 64)
		tok.call("GET", "/metrics", nil).must(t, 401)
	})
}

func TestSiteScope(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		// Multi-site roles exist, and site-admin needs a site.
		boot.call("POST", "/api/v1/users", map[string]string{"username": "sa", "password": "long-enough", "role": "site-admin"}).must(t, 400)
		saA := boot.createUser("sa-a", "site-a-pass", "site-admin", "a")
		bID := boot.createUser("bob-b", "site-b-pass", "viewer", "b")
		boot.createUser("global", "global-pass", "global-admin", "")

		sa := h.client(t)
		sa.login("sa-a", "site-a-pass")
		// Lists show only the own site.
		var users []struct {
			Username, Site string
		}
		sa.call("GET", "/api/v1/users", nil).must(t, 200).decode(t, &users)
		if len(users) != 1 || users[0].Username != "sa-a" {
			t.Errorf("site-admin sees %+v", users)
		}
		// Another site's object is a 404, exactly like a missing one.
		if r := sa.call("PUT", fmt.Sprintf("/api/v1/users/%d", bID), map[string]any{"role": "analyst"}); r.code != 404 || r.body != `{"error":"user not found"}` {
			t.Errorf("other site's user: %d %s", r.code, r.body)
		}
		sa.call("DELETE", fmt.Sprintf("/api/v1/users/%d", bID), nil).must(t, 404)
		// Creation pins the site; granting above itself is refused.
		var u struct {
			Site string `json:"site"`
		}
		sa.call("POST", "/api/v1/users", map[string]string{"username": "new-a", "password": "long-enough", "role": "viewer", "site": "b"}).must(t, 200).decode(t, &u)
		if u.Site != "a" {
			t.Errorf("site not pinned: %q", u.Site)
		}
		sa.call("POST", "/api/v1/users", map[string]string{"username": "esc", "password": "long-enough", "role": "admin"}).must(t, 403)
		// Moving its own user to another site is refused.
		sa.call("PUT", fmt.Sprintf("/api/v1/users/%d", saA), map[string]any{"site": "b"}).must(t, 403)
		// Tokens likewise: pinned to the site, and a site-bound token only
		// sees its site.
		var tok struct {
			Token string `json:"token"`
			Site  string `json:"site"`
		}
		sa.call("POST", "/api/v1/tokens", map[string]string{"name": "a-bot", "role": "site-admin", "site": ""}).must(t, 200).decode(t, &tok)
		if tok.Site != "a" {
			t.Errorf("token site %q", tok.Site)
		}
		bot := h.client(t)
		bot.bearer = tok.Token
		bot.call("GET", "/api/v1/users", nil).must(t, 200).decode(t, &users)
		for _, u := range users {
			if u.Site != "a" {
				t.Errorf("site-bound token sees %+v", u)
			}
		}
		// The audit chain spans every site: not for site-bound identities.
		sa.call("GET", "/api/v1/audit", nil).must(t, 403)
		g := h.client(t)
		g.login("global", "global-pass")
		g.call("GET", "/api/v1/audit", nil).must(t, 200)
	})
}
