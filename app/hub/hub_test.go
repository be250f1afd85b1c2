package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/app/config"
)

// startHub starts a hub on a free port and stops it when the test ends.
func startHub(t *testing.T, cfg config.HubConfig) *Hub {
	t.Helper()
	cfg.Server.Port = 0
	if cfg.Vault.File == "vault.key" {
		cfg.Vault.File = filepath.Join(t.TempDir(), "vault.key")
	}
	cfg.Record.Dir = filepath.Join(t.TempDir(), "captures")
	cfg.Geo.Dir = filepath.Join(t.TempDir(), "geoip")
	cfg.Geo.Online = false
	h, err := newStarted(slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
	if err != nil {
		t.Fatalf("start hub: %v", err)
	}
	t.Cleanup(func() { _ = h.Stop(context.Background()) })
	return h
}

func base(h *Hub) string {
	return fmt.Sprintf("http://127.0.0.1:%d", h.Addr().(*net.TCPAddr).Port)
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestHubServesOnSQLite(t *testing.T) {
	cfg := config.DefaultHubConfig()
	cfg.Store.DSN = filepath.Join(t.TempDir(), "netmon.db")
	h := startHub(t, cfg)
	u := base(h)

	if code, _, body := get(t, u+"/healthz"); code != 200 || body != `{"version":"dev","protocol_version":1}` {
		t.Errorf("healthz: %d %s", code, body)
	}
	if code, _, body := get(t, u+"/readyz"); code != 200 || body != `{"ready":true,"database":"ok"}` {
		t.Errorf("readyz: %d %s", code, body)
	}
	code, _, body := get(t, u+"/api/openapi.json")
	var doc map[string]any
	if code != 200 || json.Unmarshal([]byte(body), &doc) != nil || doc["openapi"] != "3.1.0" {
		t.Errorf("openapi.json: %d %.200s", code, body)
	}
	code, hdr, body := get(t, u+"/live")
	if code != 200 || !strings.Contains(body, "<title>netmon</title>") || !strings.Contains(hdr.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("UI shell: %d %v %.200s", code, hdr, body)
	}
	if _, err := os.Stat(cfg.Store.DSN); err != nil {
		t.Errorf("database file: %v", err)
	}
	code, _, body = get(t, u+"/metrics")
	for _, want := range []string{"go_goroutines", "process_resident_memory_bytes", "netmon_build_info", "go_sql_open_connections", `netmon_http_request_duration_seconds_count{method="GET",route="/healthz",status="200"} 1`,
		// The capture component's, registered like the collectors'.
		"netmon_capture_running", "netmon_capture_kernel_drops_total", "netmon_capture_ring_freezes_total", `netmon_capture_decode_errors_total{device="",kind="frame"} 0`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestStartFailsClearly(t *testing.T) {
	tests := []struct {
		desc, db, wantErr string
	}{
		{"missing directory", "/nonexistent/dir/netmon.db", "/nonexistent/dir"},
		{"unreachable PostgreSQL", "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2", "127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			cfg := config.DefaultHubConfig()
			cfg.Store.DSN, cfg.Server.Port = tt.db, 0
			cfg.Vault.File = filepath.Join(t.TempDir(), "vault.key")
			cfg.Geo.Online = false
			_, err := newStarted(slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Start error = %v, want one naming %q", err, tt.wantErr)
			}
		})
	}
}

// TestStopDrainsInFlightRequests holds a request inside its handler while
// Stop runs: Stop must wait for it, the request must still be answered, and
// new connections must be refused meanwhile.
func TestStopDrainsInFlightRequests(t *testing.T) {
	cfg := config.DefaultHubConfig()
	cfg.Store.DSN, cfg.Server.Port = filepath.Join(t.TempDir(), "netmon.db"), 0
	cfg.Vault.File = filepath.Join(t.TempDir(), "vault.key")
	cfg.Geo.Online = false
	entered, release := make(chan struct{}), make(chan struct{})
	h, err := newStarted(slog.New(slog.NewTextHandler(io.Discard, nil)), cfg, func(h *Hub) {
		h.wrap = func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/slow" {
					close(entered)
					<-release
					_, _ = io.WriteString(w, "done")
					return
				}
				next.ServeHTTP(w, r)
			})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Stop(context.Background()) })
	addr := fmt.Sprintf("127.0.0.1:%d", h.Addr().(*net.TCPAddr).Port)

	type result struct {
		code int
		body string
		err  error
	}
	answered := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/slow")
		if err != nil {
			answered <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- result{resp.StatusCode, string(b), err}
	}()
	<-entered

	stopped := make(chan error, 1)
	go func() { stopped <- h.Stop(context.Background()) }()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) with a request in flight", err)
	case <-time.After(300 * time.Millisecond):
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("a new connection was accepted while draining")
	}
	close(release)
	r := <-answered
	if r.err != nil || r.code != 200 || r.body != "done" {
		t.Fatalf("in-flight request: %d %q %v", r.code, r.body, r.err)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("Stop: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return after the request finished")
	}
}
