package hub

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netmon/app/config"
	"netmon/app/logging"
)

// TestBusyPortFailsFirst: a hub whose port is taken fails before it opens
// (and creates) its database, makes a vault key or logs an enroll token.
func TestBusyPortFailsFirst(t *testing.T) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	cfg := config.DefaultHubConfig()
	cfg.Server.Port = ln.Addr().(*net.TCPAddr).Port
	cfg.Store.DSN = filepath.Join(dir, "netmon.db")
	cfg.Vault.File = filepath.Join(dir, "vault.key")
	cfg.Record.Dir, cfg.Geo.Dir, cfg.Geo.Online = dir, dir, false
	var logs bytes.Buffer
	log, _ := logging.New(&logs, "json", "debug")
	h, err := newStarted(log, cfg)
	if err == nil {
		_ = h.Stop(context.Background())
		t.Fatal("the hub started on a busy port")
	}
	if !strings.Contains(err.Error(), "listen on port") || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("error %q does not say the port is busy", err)
	}
	for _, f := range []string{"netmon.db", "vault.key"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was created before the port was bound", f)
		}
	}
	if strings.Contains(logs.String(), "enroll") || strings.Contains(logs.String(), "migration") {
		t.Errorf("the hub worked before binding its port:\n%s", logs.String())
	}
}

// TestStartWarnings: the hub says at start what a new user must know —
// authentication off (and where it listens), GeoIP going online to a
// third party, a bootstrap password that can no longer sign anyone in —
// and -listen 127.0.0.1 keeps it on this machine.
func TestStartWarnings(t *testing.T) {
	dsn := storetestSQLite(t)
	key := filepath.Join(t.TempDir(), "vault.key")
	open := startTestHub(t, dsn, func(c *config.HubConfig) {
		c.Server.Listen = "127.0.0.1"
		c.Vault.File = key
		c.Geo.Online = true // no .mmdb in the empty GeoIP dir
	})
	if ip := open.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		t.Errorf("-listen 127.0.0.1 listens on %v", ip)
	}
	logs := open.logs.String()
	for _, want := range []string{"authentication is OFF on this machine only (127.0.0.1)", "GeoIP is online", "ip-api.com"} {
		if !strings.Contains(logs, want) {
			t.Errorf("start log lacks %q:\n%s", want, logs)
		}
	}
	admin := open.client(t)
	admin.createUser("root", "root-pass-123", "admin", "")
	_ = open.Stop(context.Background())

	withPassword := startTestHub(t, dsn, func(c *config.HubConfig) {
		c.Vault.File = key
		c.Auth.Password = "bootstrap-secret-1"
	})
	if logs := withPassword.logs.String(); !strings.Contains(logs, "the bootstrap password (-auth-password / NETMON_AUTH_PASSWORD) no longer signs anyone in") ||
		strings.Contains(logs, "authentication is OFF") {
		t.Errorf("start log with an admin and a bootstrap password:\n%s", logs)
	}
}
