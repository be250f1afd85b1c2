package hub

import (
	"context"

	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"netmon/app/config"
	"netmon/store"
	"netmon/store/storetest"
)

type auditRow struct {
	ID         int64  `json:"id"`
	Username   string `json:"username"`
	Role       string `json:"role"`
	Action     string `json:"action"`
	Target     string `json:"target"`
	IP         string `json:"ip"`
	Result     string `json:"result"`
	ActorType  string `json:"actor_type"`
	RequestID  string `json:"request_id"`
	UserAgent  string `json:"user_agent"`
	BeforeJSON string `json:"before_json"`
	AfterJSON  string `json:"after_json"`
	PrevHash   string `json:"prev_hash"`
	Hash       string `json:"hash"`
}

func TestAuditTrailAndVerify(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn)
		boot.headers["X-Request-Id"] = "trace-create-1"
		boot.headers["User-Agent"] = "netmon-test/1"
		id := boot.createUser("carol", "carol-pass-1", "netops", "")
		delete(boot.headers, "X-Request-Id")
		boot.call("PUT", fmt.Sprintf("/api/v1/users/%d", id), map[string]any{"password": "carol-pass-2", "role": "analyst"}).must(t, 200)
		boot.call("POST", "/api/v1/tokens", map[string]string{"name": "ci", "role": "viewer"}).must(t, 200)
		h.client(t).call("POST", "/api/login", map[string]string{"username": "carol", "password": "wrong-pass"}).must(t, 401)

		var rows []auditRow
		boot.call("GET", "/api/v1/audit", nil).must(t, 200).decode(t, &rows)
		var actions []string
		for i := len(rows) - 1; i >= 0; i-- {
			actions = append(actions, rows[i].Action+"/"+rows[i].Result)
		}
		want := "login/ok user.create/ok user.update/ok token.create/ok login/error"
		if strings.Join(actions, " ") != want {
			t.Fatalf("actions oldest first:\n got %s\nwant %s", strings.Join(actions, " "), want)
		}
		create := rows[3]
		if create.Username != "admin" || create.ActorType != "legacy" || create.IP != "127.0.0.1" || create.RequestID != "trace-create-1" ||
			create.UserAgent != "netmon-test/1" || create.Target != fmt.Sprintf("user:%d:carol", id) {
			t.Errorf("create record %+v", create)
		}
		update := rows[2]
		if !strings.Contains(update.BeforeJSON, `"role":"netops"`) || !strings.Contains(update.AfterJSON, `"role":"analyst"`) {
			t.Errorf("update before/after: %s / %s", update.BeforeJSON, update.AfterJSON)
		}
		for _, r := range rows {
			if strings.Contains(r.BeforeJSON+r.AfterJSON, "carol-pass") || strings.Contains(r.BeforeJSON+r.AfterJSON, "$2a$") {
				t.Errorf("record %d carries a password or hash", r.ID)
			}
			if r.ID > 1 && r.PrevHash == "" {
				t.Errorf("record %d has no prev_hash", r.ID)
			}
		}
		// Filters.
		filtered := func(q string) int {
			var out []auditRow
			boot.call("GET", "/api/v1/audit?"+q, nil).must(t, 200).decode(t, &out)
			return len(out)
		}
		for q, n := range map[string]int{"actor=admin": 4, "action=user.*": 2, "result=error": 1, "resource=carol": 2, "ip=127.0.0.1": 5, "limit=2": 2, "from=1&to=2": 0} {
			if got := filtered(q); got != n {
				t.Errorf("audit?%s: %d rows, want %d", q, got, n)
			}
		}
		boot.call("GET", "/api/v1/audit?result=maybe", nil).must(t, 400)
		boot.call("GET", "/api/v1/audit?limit=0", nil).must(t, 400)

		var v struct {
			OK       bool  `json:"ok"`
			BrokenAt int64 `json:"broken_at"`
			Checked  int64 `json:"checked"`
		}
		boot.call("GET", "/api/v1/audit/verify", nil).must(t, 200).decode(t, &v)
		if !v.OK || v.BrokenAt != 0 || v.Checked != 5 {
			t.Fatalf("verify %+v", v)
		}
		// Someone edits row 3 in the database: verify names it.
		if _, err := h.db.Writer().ExecContext(context.Background(), `UPDATE audit_events SET detail = 'nothing to see' WHERE id = 3`); err != nil {
			t.Fatal(err)
		}
		r := boot.call("GET", "/api/v1/audit/verify", nil).must(t, 200)
		if r.body != `{"ok":false,"broken_at":3,"checked":3}` {
			t.Errorf("verify after tampering: %s", r.body)
		}
	})
}

// auditDown makes every audit append fail (a trigger), as a full disk or
// a broken table would.
func auditDown(t *testing.T, h *testHub) {
	t.Helper()
	trigger := map[store.Dialect][]string{
		store.SQLite: {`CREATE TRIGGER audit_down BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'audit storage down'); END`},
		store.Postgres: {
			`CREATE FUNCTION audit_down() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit storage down'; END $$`,
			`CREATE TRIGGER audit_down BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_down()`,
		},
	}[h.db.Dialect()]
	for _, q := range trigger {
		if _, err := h.db.Writer().ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAuditFailClosed is RELIABILITY case 17: when the audit record cannot
// be written, the privileged change is not made.
func TestAuditFailClosed(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn)
		ctx := context.Background()
		auditDown(t, h)
		r := boot.call("POST", "/api/v1/users", map[string]string{"username": "ghost", "password": "ghost-pass-1", "role": "viewer"})
		if r.code != 500 {
			t.Fatalf("create with audit down: %d %s", r.code, r.body)
		}
		if _, err := h.db.GetUserByName(ctx, "ghost"); err == nil {
			t.Fatal("the user was created although its audit record failed")
		}
		boot.call("POST", "/api/v1/tokens", map[string]string{"name": "t", "role": "viewer"}).must(t, 500)
		var toks []any
		boot.call("GET", "/api/v1/tokens", nil).must(t, 200).decode(t, &toks) // reads go on
		if len(toks) != 0 {
			t.Errorf("token created without audit: %v", toks)
		}
	})
}

// TestLoginSessionCommitsWithItsRecord: a login whose audit record cannot
// be written opens no session (500, no token, no sessions row), with the
// memory and the database session store alike; a login that succeeds has
// exactly one record.
func TestLoginSessionCommitsWithItsRecord(t *testing.T) {
	for _, kind := range []string{"memory", "db"} {
		t.Run(kind, func(t *testing.T) {
			storetest.EachDSN(t, func(t *testing.T, dsn string) {
				h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.SessionStore = kind })
				ctx := context.Background()
				boot.createUser("erin", "erin-pass-1", "viewer", "")
				var before int
				if err := h.db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&before); err != nil {
					t.Fatal(err)
				}
				auditDown(t, h)
				r := h.client(t).call("POST", "/api/login", map[string]string{"username": "erin", "password": "erin-pass-1"})
				if r.code != 500 || strings.Contains(r.body, "token") {
					t.Fatalf("login with audit down: %d %s", r.code, r.body)
				}
				var after int
				if err := h.db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&after); err != nil {
					t.Fatal(err)
				}
				if after != before {
					t.Errorf("sessions rows %d -> %d: a session without its record", before, after)
				}
				if _, err := h.db.Writer().ExecContext(ctx, `DROP TRIGGER audit_down`+map[store.Dialect]string{store.Postgres: " ON audit_events"}[h.db.Dialect()]); err != nil {
					t.Fatal(err)
				}
				erin := h.client(t)
				erin.login("erin", "erin-pass-1")
				var evs []store.AuditEvent
				boot.call("GET", "/api/v1/audit?action=login&actor=erin&result=ok", nil).must(t, 200).decode(t, &evs)
				if len(evs) != 1 {
					t.Errorf("%d login records for erin, want 1", len(evs))
				}
			})
		})
	}
}

// TestNoSecretInLogsAuditOrResponses greps everything a hub wrote during a
// session of sensitive operations for the secrets involved.
func TestNoSecretInLogsAuditOrResponses(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		const legacy = "legacy-secret-XYZ1"
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.Password = legacy })
		var secrets []string
		secrets = append(secrets, legacy, boot.cookie)
		id := boot.createUser("dave", "dave-secret-PW1", "admin", "")
		secrets = append(secrets, "dave-secret-PW1")
		dave := h.client(t)
		secrets = append(secrets, dave.login("dave", "dave-secret-PW1"))
		dave.call("PUT", fmt.Sprintf("/api/v1/users/%d", id), map[string]any{"password": "dave-secret-PW2"}).must(t, 200)
		secrets = append(secrets, "dave-secret-PW2")
		dave.login("dave", "dave-secret-PW2")
		var tok struct{ Token string }
		dave.call("POST", "/api/v1/tokens", map[string]string{"name": "x", "role": "viewer"}).must(t, 200).decode(t, &tok)
		secrets = append(secrets, tok.Token)
		h.client(t).call("POST", "/api/login", map[string]string{"username": "dave", "password": "dave-typo-PW3"}).must(t, 401)
		secrets = append(secrets, "dave-typo-PW3")

		var everything strings.Builder
		everything.WriteString(h.logs.String())
		everything.WriteString(dave.call("GET", "/api/v1/audit?limit=1000", nil).must(t, 200).body)
		everything.WriteString(dave.call("GET", "/api/v1/users", nil).body)
		everything.WriteString(dave.call("GET", "/api/v1/tokens", nil).body)
		key, err := os.ReadFile(h.cfg.Vault.File)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, strings.TrimSpace(string(key)))
		all := everything.String()
		for _, s := range secrets {
			if s != "" && strings.Contains(all, s) {
				t.Errorf("secret %.6s… found in logs, audit or responses", s)
			}
		}
		if regexp.MustCompile(`\$2[aby]\$`).MatchString(all) {
			t.Error("a bcrypt hash was exposed")
		}
		if !strings.Contains(h.logs.String(), `"route":"/api/login"`) {
			t.Error("the log was not captured")
		}
	})
}

// TestVaultKeyChecked: a hub restarted with another vault key refuses to
// start with a clear message instead of failing later on every secret.
func TestVaultKeyChecked(t *testing.T) {
	dir := t.TempDir()
	dsn := filepath.Join(dir, "netmon.db")
	keyFile := filepath.Join(dir, "vault.key")
	h := startTestHub(t, dsn, func(c *config.HubConfig) { c.Vault.File = keyFile })
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("generated key file: %v %v", st, err)
	}
	_ = h.Stop(context.Background())
	// Same key: starts.
	startTestHub(t, dsn, func(c *config.HubConfig) { c.Vault.File = keyFile }).Stop(context.Background())
	// Another key: refused.
	other := filepath.Join(dir, "other.key")
	if err := os.WriteFile(other, []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.DefaultHubConfig()
	cfg.Store.DSN, cfg.Server.Port, cfg.Vault.File = dsn, 0, other
	_, err := newStarted(discardLog(), cfg)
	if err == nil || !strings.Contains(err.Error(), "vault key does not match") {
		t.Fatalf("start with another key: %v", err)
	}
	// The env source: hex or base64, never written anywhere.
	t.Setenv("NETMON_VAULT_MASTER_KEY", "not a key")
	cfg.Vault.Source = "env"
	_, err = newStarted(discardLog(), cfg)
	if err == nil || !strings.Contains(err.Error(), "NETMON_VAULT_MASTER_KEY") || strings.Contains(err.Error(), "not a key") {
		t.Fatalf("bad env key: %v", err)
	}

}
