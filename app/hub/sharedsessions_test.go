package hub

import (
	"path/filepath"
	"testing"

	"netmon/app/config"
	"netmon/store/storetest"
)

// TestSessionsSharedAcrossHubs: two hubs with -session-store=db on one
// PostgreSQL share sessions; a logout on one is refused on the other at
// once. With the memory store they do not share (the contrast shows the
// test can fail).
func TestSessionsSharedAcrossHubs(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	key := filepath.Join(t.TempDir(), "vault.key")
	shared := func(store string) func(*config.HubConfig) {
		return func(c *config.HubConfig) {
			c.Auth.Password = "bootstrap-secret-1"
			c.Auth.SessionStore = store
			c.Vault.File = key
			c.Retention.Enabled = false
		}
	}
	a := startTestHub(t, dsn, shared("db"))
	b := startTestHub(t, dsn, shared("db"))

	onA := a.client(t)
	tok := onA.login("", "bootstrap-secret-1")
	onB := b.client(t)
	onB.cookie = tok
	onB.call("GET", "/api/v1/users", nil).must(t, 200)
	onB.call("POST", "/api/logout", nil).must(t, 200)
	if r := onA.call("GET", "/api/v1/users", nil); r.code != 401 || r.body != authRequired {
		t.Fatalf("session logged out on B still works on A: %d %s", r.code, r.body)
	}
	var n int
	if err := a.db.Reader().QueryRow(`SELECT COUNT(*) FROM sessions WHERE token_hash = $1`, tok).Scan(&n); err != nil || n != 0 {
		t.Fatalf("raw token stored in the sessions table (%d, %v)", n, err)
	}

	c := startTestHub(t, dsn, shared("memory"))
	d := startTestHub(t, dsn, shared("memory"))
	onC := c.client(t)
	tok = onC.login("", "bootstrap-secret-1")
	onD := d.client(t)
	onD.cookie = tok
	onD.call("GET", "/api/v1/users", nil).must(t, 401)
}
