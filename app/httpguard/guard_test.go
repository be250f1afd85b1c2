package httpguard

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// serve starts a server on loopback behind a guard with cfg. Its handler
// reads the body through Body, then waits on block (if any).
func serve(t *testing.T, cfg Config, block chan struct{}) (*Guard, string) {
	t.Helper()
	g := New(slog.New(slog.DiscardHandler), cfg, prometheus.NewRegistry())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		ReadHeaderTimeout: 5 * time.Second,
		ConnState:         g.ConnState,
		ConnContext:       g.ConnContext,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			g.Body(r, 0)
			if _, err := io.ReadAll(r.Body); err != nil {
				status := http.StatusBadRequest
				if errors.Is(err, os.ErrDeadlineExceeded) {
					status = http.StatusRequestTimeout
				}
				http.Error(w, err.Error(), status)
				return
			}
			if block != nil {
				<-block
			}
			// A deadline left on the connection would have cancelled
			// the request by now (net/http reads on in the background).
			if r.Context().Err() != nil {
				http.Error(w, "request context cancelled", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, "ok")
		}),
	}
	go func() { _ = srv.Serve(g.Listener(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return g, ln.Addr().String()
}

// dialFrom opens a connection from a given loopback address.
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedByPeer reports whether the server closed c within d.
func closedByPeer(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

func count(g *Guard, reason string) float64 {
	return testutil.ToFloat64(g.m.closed.WithLabelValues(reason))
}

// settle waits until the guard has admitted n connections.
func settle(t *testing.T, g *Guard, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		g.mu.Lock()
		got := g.total
		g.mu.Unlock()
		if got == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("guard did not reach %d connections", n)
}

func TestEviction(t *testing.T) {
	tests := []struct {
		desc string
		cfg  Config
		// first are opened silent, in order, from these sources; then one
		// more from last.
		first []string
		last  string
		// wantClosed is the index in first of the connection evicted.
		wantClosed int
		reason     string
	}{
		{desc: "per-source cap evicts that source's longest-waiting connection", cfg: Config{MaxConns: 10, MaxConnsPerSource: 2},
			first: []string{"127.0.0.2", "127.0.0.3", "127.0.0.2"}, last: "127.0.0.2", wantClosed: 0, reason: "evicted_per_source"},
		{desc: "total cap evicts the longest-waiting connection of any source", cfg: Config{MaxConns: 3, MaxConnsPerSource: 3},
			first: []string{"127.0.0.4", "127.0.0.5", "127.0.0.6"}, last: "127.0.0.7", wantClosed: 0, reason: "evicted_total"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			g, addr := serve(t, tt.cfg, nil)
			var cs []net.Conn
			for i, src := range tt.first {
				cs = append(cs, dialFrom(t, src, addr))
				settle(t, g, i+1)
			}
			newest := dialFrom(t, tt.last, addr)
			for i, c := range cs {
				if got := closedByPeer(c, 300*time.Millisecond); got != (i == tt.wantClosed) {
					t.Errorf("connection %d closed = %v, want %v", i, got, i == tt.wantClosed)
				}
			}
			// The newcomer is served.
			fmt.Fprintf(newest, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			buf := make([]byte, 12)
			_ = newest.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, err := io.ReadFull(newest, buf); err != nil || string(buf) != "HTTP/1.1 200" {
				t.Errorf("newest connection: %q %v", buf, err)
			}
			if got := count(g, tt.reason); got != 1 {
				t.Errorf("%s = %v, want 1", tt.reason, got)
			}
		})
	}
}

// TestServingIsNeverEvicted: connections whose request is with the handler
// are not evicted; at a cap made of them only, the newcomer is closed.
func TestServingIsNeverEvicted(t *testing.T) {
	block := make(chan struct{})
	g, addr := serve(t, Config{MaxConns: 10, MaxConnsPerSource: 2}, block)
	var wg sync.WaitGroup
	results := make([]string, 2)
	for i := range 2 {
		c := dialFrom(t, "127.0.0.8", addr)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 12)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.ReadFull(c, buf)
			results[i] = string(buf)
		}()
	}
	settle(t, g, 2)
	// Wait until both requests are with the handler.
	deadline := time.Now().Add(2 * time.Second)
	for g.evictive.Len() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	third := dialFrom(t, "127.0.0.8", addr)
	if !closedByPeer(third, time.Second) {
		t.Error("the third connection was not closed")
	}
	close(block)
	wg.Wait()
	for i, r := range results {
		if r != "HTTP/1.1 200" {
			t.Errorf("busy connection %d got %q", i, r)
		}
	}
	if got := count(g, "refused_per_source"); got != 1 {
		t.Errorf("refused_per_source = %v, want 1", got)
	}
}

// TestBodyDeadline: a body that does not arrive in time fails the read
// (the handler answers 408) and is counted; one that does is served, and
// a handler slower than the deadline is not cut off once the body is in.
func TestBodyDeadline(t *testing.T) {
	block := make(chan struct{})
	g, addr := serve(t, Config{BodyTimeout: 300 * time.Millisecond, MaxConns: 10}, block)

	slow := dialFrom(t, "127.0.0.9", addr)
	fmt.Fprintf(slow, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
	buf := make([]byte, 12)
	_ = slow.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	if _, err := io.ReadFull(slow, buf); err != nil || string(buf) != "HTTP/1.1 408" {
		t.Errorf("slow body: %q %v", buf, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("slow body answered after %v", took)
	}
	if got := count(g, "body_timeout"); got != 1 {
		t.Errorf("body_timeout = %v, want 1", got)
	}

	prompt := dialFrom(t, "127.0.0.10", addr)
	fmt.Fprintf(prompt, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	time.Sleep(600 * time.Millisecond) // the handler outlives the body deadline
	close(block)
	_ = prompt.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.ReadFull(prompt, buf); err != nil || string(buf) != "HTTP/1.1 200" {
		t.Errorf("prompt body with a slow handler: %q %v", buf, err)
	}
}
