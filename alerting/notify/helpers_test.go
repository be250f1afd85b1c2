package notify

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/netguard"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

var loopGuard = netguard.New(netguard.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})

// fixed is the clock of tests that compare timestamps.
var fixed = time.Unix(1764000000, 0)

var portEvent = record.AlertEvent{ID: 42, TS: 1764000000, Kind: "port", Key: "agent1|203.0.113.9:4444", Severity: 9, Site: "paris",
	Message: "connection to 203.0.113.9:4444", State: record.AlertFiring, Count: 1, LastTS: 1764000000, AgentID: 3}

// settingsBox holds settings a test changes while the notifier runs.
type settingsBox struct {
	mu sync.Mutex
	s  Settings
}

func (b *settingsBox) get() Settings  { b.mu.Lock(); defer b.mu.Unlock(); return b.s }
func (b *settingsBox) set(s Settings) { b.mu.Lock(); b.s = s; b.mu.Unlock() }
func newBox(s Settings) *settingsBox  { return &settingsBox{s: s} }

// testConfig retries fast.
func testConfig() Config {
	c := DefaultConfig()
	c.RetryFirst, c.RetryMax, c.Poll, c.Timeout = time.Second, 2*time.Second, 100*time.Millisecond, 5*time.Second
	c.Hostname = "hub1"
	return c
}

// startNotifier runs a notifier over db; it stops with the test.
func startNotifier(t *testing.T, db *store.DB, cfg Config, box *settingsBox, deps Deps) (*Notifier, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	deps.Store = db
	deps.Settings = box.get
	if deps.Guard == nil {
		deps.Guard = loopGuard
	}
	n := New(storetest.Logger(t), cfg, deps, reg)
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	return n, reg
}

// waitDeliveries waits until the log holds want rows of status.
func waitDeliveries(t *testing.T, db *store.DB, status string, want int, within time.Duration) []record.AlertDelivery {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ds, err := db.Deliveries(context.Background(), store.DeliveryFilter{Status: status, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) >= want {
			return ds
		}
		if time.Now().After(deadline) {
			all, _ := db.Deliveries(context.Background(), store.DeliveryFilter{Limit: 1000})
			t.Fatalf("%d %s deliveries after %s, want %d; log: %+v", len(ds), status, within, want, all)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// request is what a receiver got.
type request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// recorder is a receiver that records requests and answers status.
type recorder struct {
	mu     sync.Mutex
	got    []request
	status int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got = append(r.got, request{req.Method, req.URL.Path, req.Header.Clone(), b})
	st := r.status
	r.mu.Unlock()
	if st == 0 {
		st = http.StatusOK
	}
	w.WriteHeader(st)
	_, _ = w.Write([]byte("remote secret body"))
}

func (r *recorder) requests() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.got...)
}

func strconvFormat(i int64) string { return fmt.Sprint(i) }
