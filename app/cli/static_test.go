package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/app/hub"
	"netmon/app/logging"
)

// TestStaticEnrollTokenSurvivesRestarts (issue 14): a hub without
// -enroll-token makes its static token once, logs it once, keeps it sealed
// in the database across restarts, and `netmon admin enroll-token
// rotate-static` replaces it (audited) for the next start.
func TestStaticEnrollTokenSurvivesRestarts(t *testing.T) {
	dir := t.TempDir()
	db, key := filepath.Join(dir, "netmon.db"), filepath.Join(dir, "vault.key")
	start := func() (*hub.Hub, string) {
		cfg := config.DefaultHubConfig()
		cfg.Server.Port, cfg.Store.DSN = 0, db
		cfg.Vault.File = key
		cfg.Record.Dir, cfg.Geo.Dir, cfg.Geo.Online = dir, dir, false
		var logs bytes.Buffer
		log, _ := logging.New(&logs, "text", "info")
		h, err := hub.New(context.Background(), log, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return h, logs.String() + h.Banner(context.Background())
	}
	hello := func(h *hub.Hub, token string) int {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d%s", h.Addr().(*net.TCPAddr).Port, wire.PathHello),
			strings.NewReader(`{"name":"pc","machine_id":"m-`+token[:6]+`"}`))
		req.Header.Set(wire.HeaderEnrollToken, token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	h, logs := start()
	m := regexp.MustCompile(`-hub-token ([0-9a-f]{64})\n`).FindStringSubmatch(logs)
	if m == nil {
		t.Fatalf("no generated token in the first start's banner:\n%s", logs)
	}
	if strings.Count(logs, m[1]) != 1 {
		t.Errorf("the token is shown %d times (the banner only, once):\n%s", strings.Count(logs, m[1]), logs)
	}
	first := m[1]
	_ = h.Stop(context.Background())

	h, logs = start()
	if strings.Contains(logs, first) || !strings.Contains(logs, "static enroll token loaded from the database") {
		t.Errorf("second start's log:\n%s", logs)
	}
	if code := hello(h, first); code != 200 {
		t.Errorf("hello with the kept token after a restart: %d", code)
	}
	_ = h.Stop(context.Background())

	code, out, errOut := runIn("", "admin", "enroll-token", "rotate-static", "--db", db, "--vault-key-file", key)
	second := strings.TrimSpace(out)
	if code != 0 || len(second) != 64 || second == first {
		t.Fatalf("rotate-static: %d %q %s", code, out, errOut)
	}
	if code, _, errOut := runIn("", "admin", "enroll-token", "rotate-static", "--db", db, "--vault-key-file", filepath.Join(dir, "other.key")); code != 2 || !strings.Contains(errOut, "vault key file") {
		t.Errorf("rotate-static without the key: %d %s", code, errOut)
	}

	h, _ = start()
	defer h.Stop(context.Background())
	if code := hello(h, first); code != 401 {
		t.Errorf("hello with the rotated-out token: %d, want 401", code)
	}
	if code := hello(h, second); code != 200 {
		t.Errorf("hello with the new token: %d, want 200", code)
	}
	code, out, _ = runIn("", "admin", "user", "list", "--db", db) // the database is there
	if code != 0 {
		t.Fatalf("list: %d %s", code, out)
	}
}
