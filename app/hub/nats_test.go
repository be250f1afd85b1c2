package hub

import (
	"fmt"
	"log/slog"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"netmon/app/config"
	"netmon/store/record"
	"netmon/store/storetest"
)

// startNATS runs a current NATS server (the module pinned in go.mod,
// embedded in the test binary) with JetStream and sync_interval:
// always, as netmon requires; Debian's 2.9.10 is too old.
func startNATS(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		SyncAlways: true, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// TestHubThroughNATS is -nats through the hub: syslog published to
// JetStream is stored once, /readyz says the queue is ok and answers 503
// once the NATS server is gone, and a hub pointed at an unreachable NATS
// server refuses to start with the reason.
func TestHubThroughNATS(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		ns := startNATS(t)
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.NATS.URL = ns.ClientURL() })
		if r := boot.call("GET", "/readyz", nil).must(t, 200); r.body != `{"ready":true,"database":"ok","queue":"ok"}` {
			t.Errorf("readyz: %s", r.body)
		}
		now := time.Now().Unix()
		ev := []record.SyslogEvent{{TS: now, Host: "fw-1", Tag: "kernel", Severity: 4, Message: "through nats 1", Source: netip.MustParseAddr("192.0.2.1")},
			{TS: now, Host: "fw-1", Tag: "kernel", Severity: 4, Message: "through nats 2", Source: netip.MustParseAddr("192.0.2.1")}}
		for range 2 { // the same batch twice: one Nats-Msg-Id
			if !h.ingest.PutSyslog(ev) {
				t.Fatal("PutSyslog refused")
			}
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			rows, err := h.db.ListSyslog(t.Context(), 10, 0, 0, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) >= 2 {
				if len(rows) != 2 {
					t.Errorf("stored %d syslog rows, want 2 (the batch sent twice is stored once)", len(rows))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("stored %d syslog rows after 10 s", len(rows))
			}
			time.Sleep(50 * time.Millisecond)
		}
		ns.Shutdown()
		ns.WaitForShutdown()
		deadline = time.Now().Add(10 * time.Second)
		for {
			r := boot.call("GET", "/readyz", nil)
			if r.code == 503 {
				if r.body != `{"ready":false,"database":"ok","queue":"unavailable","error":"the NATS server does not answer"}` {
					t.Errorf("readyz with NATS down: %s", r.body)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("readyz still %d %s with NATS down", r.code, r.body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	dead := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))
	_, err := New(t.Context(), slog.New(slog.DiscardHandler), func() config.HubConfig {
		c := config.DefaultHubConfig()
		c.Store.DSN, c.Server.Port, c.NATS.URL = filepath.Join(t.TempDir(), "netmon.db"), 0, dead
		c.Vault.File = filepath.Join(t.TempDir(), "vault.key")
		return c
	}())
	if err == nil || !strings.Contains(err.Error(), "-nats") {
		t.Errorf("a hub with an unreachable NATS server: %v", err)
	}
}
