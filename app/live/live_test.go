package live

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

type countingSource struct {
	calls atomic.Int64
	size  int
}

func (s *countingSource) Tick(context.Context) (any, error) {
	n := s.calls.Add(1)
	return map[string]any{"type": "tick", "n": n, "pad": strings.Repeat("x", s.size)}, nil
}

func startBroker(t *testing.T, cfg Config, src TickSource) (*Broker, *httptest.Server) {
	t.Helper()
	b := New(slog.New(slog.DiscardHandler), cfg, src, nil)
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(func() { srv.Close(); _ = b.Stop() })
	return b, srv
}

func dial(t *testing.T, srv *httptest.Server, origin string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPHeader: h})
}

func TestNoTickWithoutListeners(t *testing.T) {
	src := &countingSource{}
	cfg := DefaultConfig()
	cfg.Interval = 10 * time.Millisecond
	b, srv := startBroker(t, cfg, src)
	time.Sleep(100 * time.Millisecond)
	if n := src.calls.Load(); n != 0 {
		t.Fatalf("%d ticks computed with nobody listening", n)
	}
	c, _, err := dial(t, srv, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for range 3 {
		_, raw, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || m["type"] != "tick" {
			t.Fatalf("message %s", raw)
		}
	}
	if b.Clients() != 1 {
		t.Errorf("clients %d", b.Clients())
	}
}

func TestOriginAllowList(t *testing.T) {
	cfg := DefaultConfig()
	cfg.AllowedOrigins = []string{"https://netmon.example"}
	_, srv := startBroker(t, cfg, &countingSource{})
	tests := []struct {
		origin string
		ok     bool
	}{
		{"https://netmon.example", true},
		{"http://localhost:5173", true},
		{"http://127.0.0.1:8080", true},
		{"http://[::1]:8080", true},
		{"", true}, // non-browser clients send no Origin
		{"https://evil.example", false},
		{"https://netmon.example.evil.example", false},
		{"null", false},
	}
	for _, tt := range tests {
		c, resp, err := dial(t, srv, tt.origin)
		if tt.ok != (err == nil) {
			t.Errorf("origin %q: err %v, want ok=%v", tt.origin, err, tt.ok)
		}
		if err == nil {
			c.CloseNow()
		} else if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q refused with %v, want 403", tt.origin, resp)
		}
	}
	// With no public URL (and no TLS hosts) every origin is accepted.
	_, open := startBroker(t, DefaultConfig(), &countingSource{})
	c, _, err := dial(t, open, "https://anything.example")
	if err != nil {
		t.Fatalf("open broker refused: %v", err)
	}
	c.CloseNow()
}

// TestSlowClientIsDropped: a client that never reads is disconnected and
// the reading client keeps getting a tick every interval.
func TestSlowClientIsDropped(t *testing.T) {
	src := &countingSource{size: 256 << 10} // large ticks fill socket buffers fast
	cfg := DefaultConfig()
	cfg.Interval = 20 * time.Millisecond
	cfg.WriteTimeout = 200 * time.Millisecond
	b, srv := startBroker(t, cfg, src)

	// The slow client: a raw TCP connection that upgrades and never reads.
	u := strings.TrimPrefix(srv.URL, "http://")
	raw, err := net.Dial("tcp", u)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if tc, ok := raw.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	_, _ = raw.Write([]byte("GET / HTTP/1.1\r\nHost: " + u + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"))

	fast, _, err := dial(t, srv, "")
	if err != nil {
		t.Fatal(err)
	}
	defer fast.CloseNow()
	fast.SetReadLimit(1 << 20)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last time.Time
	var worstGap time.Duration
	for i := 0; i < 60; i++ {
		if _, _, err := fast.Read(ctx); err != nil {
			t.Fatalf("fast client read %d: %v", i, err)
		}
		if !last.IsZero() {
			worstGap = max(worstGap, time.Since(last))
		}
		last = time.Now()
	}
	if b.Clients() != 1 {
		t.Fatalf("%d clients connected: the slow one was not dropped", b.Clients())
	}
	if worstGap > cfg.WriteTimeout {
		t.Errorf("the fast client waited %v between ticks: the slow one delayed it", worstGap)
	}
}
