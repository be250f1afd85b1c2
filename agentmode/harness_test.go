package agentmode

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"netmon/agentmode/collect"
	"netmon/agentmode/wire"
)

// fakeClock is a Clock the test moves by hand. It records every After
// duration asked for (the producer's waits).
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
	afters  []time.Duration
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Now()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.afters = append(c.afters, d)
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{c.now.Add(d), ch})
	return ch
}

// Advance moves time forward and fires the waits that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

func (c *fakeClock) afterCalls() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.afters...)
}

// fakeSource produces small numbered batches.
type fakeSource struct {
	mu sync.Mutex
	n  uint64
}

func (s *fakeSource) Collect(context.Context) wire.Telemetry {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	return wire.Telemetry{
		Interfaces:  []wire.Interface{{Name: "eth0", RxBytes: s.n * 1000, TxBytes: s.n * 500}},
		Connections: []wire.Connection{},
		AttrMethod:  "off", AttrNote: "test",
	}
}

// backoffRecorder stands in for the sender's wait: it records every
// duration and either returns at once or waits for release.
type backoffRecorder struct {
	mu      sync.Mutex
	waits   []time.Duration
	hold    bool
	release chan time.Time
}

func (r *backoffRecorder) after(d time.Duration) <-chan time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, d)
	if r.hold {
		return r.release
	}
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return ch
}

func (r *backoffRecorder) got() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

// syncBuffer collects log output from the agent's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testAgent is an agent wired to fakes, with its logs and clock.
type testAgent struct {
	*Agent
	clock   *fakeClock
	backoff *backoffRecorder
	logs    *syncBuffer
}

// startAgent starts an agent on hub with its state in dir; mutate may
// change the configuration first. It is stopped at cleanup if the test
// did not stop it.
func startAgent(t *testing.T, hub *fakeHub, dir string, mutate func(*Config), bo *backoffRecorder) *testAgent {
	t.Helper()
	ta := newAgent(t, hub, dir, mutate, bo)
	if err := ta.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = ta.Stop()
		}
	})
	return ta
}

func newAgent(t *testing.T, hub *fakeHub, dir string, mutate func(*Config), bo *backoffRecorder) *testAgent {
	t.Helper()
	cfg := DefaultConfig()
	cfg.HubURL, cfg.EnrollToken, cfg.Name, cfg.Site, cfg.Version = hub.URL(), "ent_test", "test-host", "lab", "test"
	cfg.StatePath = filepath.Join(dir, DefaultStateFile)
	cfg.Collect = collect.Config{Method: "auto"}
	if mutate != nil {
		mutate(&cfg)
	}
	logs := &syncBuffer{}
	a := New(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("component", "agent"), cfg)
	clk := newFakeClock()
	if bo == nil {
		bo = &backoffRecorder{}
	}
	a.clock, a.source, a.jitter, a.backoffAfter = clk, &fakeSource{}, func() float64 { return 0.5 }, bo.after
	return &testAgent{Agent: a, clock: clk, backoff: bo, logs: logs}
}

// waitFor polls cond for up to 10 s of real time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// tick waits until the producer is waiting, then moves the clock one
// interval on so it produces the next batch.
func (ta *testAgent) tick(t *testing.T) {
	t.Helper()
	ta.jump(t, ta.intervalDuration())
}

// jump waits until the producer is waiting, then moves the clock d on:
// one batch is produced whatever d is (at least the wait).
func (ta *testAgent) jump(t *testing.T, d time.Duration) {
	t.Helper()
	waitFor(t, "the producer to wait", func() bool { return ta.clock.pending() > 0 })
	ta.clock.Advance(d)
}
