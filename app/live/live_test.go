package live

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
	return startBrokerWith(t, cfg, Deps{Source: src})
}

func startBrokerWith(t *testing.T, cfg Config, deps Deps) (*Broker, *httptest.Server) {
	t.Helper()
	b := New(slog.New(slog.DiscardHandler), cfg, deps)
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

// TestOriginAllowList: origins are compared exactly — scheme, host and
// port — with the allow-list and the request's own origin.
func TestOriginAllowList(t *testing.T) {
	b, srv := startBrokerWith(t, DefaultConfig(), Deps{Source: &countingSource{},
		AllowedOrigins: []string{"https://netmon.example", "http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"}})
	if !b.ChecksOrigin() {
		t.Error("ChecksOrigin false with an allow-list")
	}
	self := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		origin string
		ok     bool
	}{
		{"https://netmon.example", true},
		{"https://netmon.example:443", true},
		{"HTTPS://NETMON.EXAMPLE", true},
		{"http://netmon.example", false}, // the report's finding: scheme ignored
		{"https://netmon.example:8443", false},
		{"http://localhost:8080", true},
		{"http://localhost:5173", false},
		{"https://localhost:8080", false},
		{"http://127.0.0.1:8080", true},
		{"http://127.0.0.1:9999", false}, // the report's finding: any port on 127.0.0.1
		{"http://[::1]:8080", true},
		{"http://" + self, true},   // the request's own origin
		{"https://" + self, false}, // same host, other scheme
		{"", true},                 // non-browser clients send no Origin
		{"https://evil.example", false},
		{"https://netmon.example.evil.example", false},
		{"null", false},
		{"file://", false},
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

// keySessions takes the key from the X-Key header; valid says which keys
// still grant the feed, failing says the check cannot answer.
type keySessions struct {
	mu      sync.Mutex
	valid   map[string]bool
	sites   map[string]string // the key's site; absent: every site
	failing bool
}

func (k *keySessions) Key(r *http.Request) string { return r.Header.Get("X-Key") }

func (k *keySessions) Site(r *http.Request) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.sites[r.Header.Get("X-Key")], true
}

func (k *keySessions) Valid(_ context.Context, key string) (string, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.failing {
		return "", false, errors.New("database down")
	}
	return k.sites[key], k.valid[key], nil
}

func (k *keySessions) set(key string, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.valid[key] = ok
}

// TestSessionEndClosesSocket: when a client's credentials stop granting
// the feed, its socket is closed with 4001 within a tick, the others keep
// receiving; a check that cannot answer closes nothing.
func TestSessionEndClosesSocket(t *testing.T) {
	ks := &keySessions{valid: map[string]bool{"alice": true, "bob": true}}
	cfg := DefaultConfig()
	cfg.Interval = 50 * time.Millisecond
	b, srv := startBrokerWith(t, cfg, Deps{Source: &countingSource{}, Sessions: ks})
	conn := func(key string) *websocket.Conn {
		h := http.Header{"X-Key": {key}}
		c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPHeader: h})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		return c
	}
	alice, bob := conn("alice"), conn("bob")
	read := func(c *websocket.Conn) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, _, err := c.Read(ctx)
		return err
	}
	for _, c := range []*websocket.Conn{alice, bob} {
		if err := read(c); err != nil {
			t.Fatal(err)
		}
	}
	ks.mu.Lock()
	ks.failing = true
	ks.mu.Unlock()
	time.Sleep(3 * cfg.Interval)
	if b.Clients() != 2 {
		t.Fatalf("a failing check closed clients: %d left", b.Clients())
	}
	ks.mu.Lock()
	ks.failing = false
	ks.mu.Unlock()

	ks.set("alice", false)
	ended := time.Now()
	var err error
	for err == nil {
		err = read(alice)
	}
	if took := time.Since(ended); took > 3*cfg.Interval {
		t.Errorf("alice's socket closed %v after her session ended, want within a tick", took)
	}
	if code := websocket.CloseStatus(err); code != CloseSessionEnded {
		t.Errorf("close code %v (%v), want %v", code, err, CloseSessionEnded)
	}
	for range 3 {
		if err := read(bob); err != nil {
			t.Fatalf("bob lost his feed: %v", err)
		}
	}
	if b.Clients() != 1 {
		t.Errorf("%d clients, want 1", b.Clients())
	}
}

// TestSlowClientIsDropped: a client that never reads is disconnected and
// the reading client keeps getting a tick every interval.
func TestSlowClientIsDropped(t *testing.T) {
	src := &countingSource{size: 256 << 10} // large ticks fill socket buffers fast
	cfg := DefaultConfig()
	cfg.Interval = 20 * time.Millisecond
	// Long enough that a fast client held behind the slow one would wait
	// seconds (what the test must catch), short enough for the test; the
	// gap it checks is half of it, generous on a loaded machine.
	cfg.WriteTimeout = 3 * time.Second
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var last time.Time
	var worstGap time.Duration
	// Read until the slow client is dropped, and at least 60 ticks.
	for i := 0; i < 60 || b.Clients() != 1; i++ {
		if _, _, err := fast.Read(ctx); err != nil {
			t.Fatalf("fast client read %d (%d clients connected): %v", i, b.Clients(), err)
		}
		if !last.IsZero() {
			worstGap = max(worstGap, time.Since(last))
		}
		last = time.Now()
	}
	if worstGap > cfg.WriteTimeout/2 {
		t.Errorf("the fast client waited %v between ticks: the slow one delayed it", worstGap)
	}
}

// TestOneTickForAllClients: the tick is computed and encoded once per
// interval whatever the number of clients, and every client gets the same
// bytes.
func TestOneTickForAllClients(t *testing.T) {
	src := &countingSource{size: 1024}
	cfg := DefaultConfig()
	cfg.Interval = 50 * time.Millisecond
	b, srv := startBroker(t, cfg, src)
	const clients = 8
	var conns []*websocket.Conn
	for range clients {
		c, _, err := dial(t, srv, "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		conns = append(conns, c)
	}
	for b.Clients() != clients {
		time.Sleep(time.Millisecond)
	}
	before := src.calls.Load()
	time.Sleep(10 * cfg.Interval)
	computed := src.calls.Load() - before
	if computed < 5 || computed > 12 {
		t.Errorf("%d ticks computed in 10 intervals with %d clients, want about 10 (one per interval)", computed, clients)
	}
	// Every client read the same message for the same tick.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	byN := map[float64]string{}
	for _, c := range conns {
		for range 3 {
			_, raw, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			n := m["n"].(float64)
			if prev, ok := byN[n]; ok && prev != string(raw) {
				t.Fatalf("tick %v differs between clients", n)
			}
			byN[n] = string(raw)
		}
	}
}
