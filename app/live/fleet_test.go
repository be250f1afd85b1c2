package live

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"netmon/store"
)

// fleetNow is the fake clock's start: 20 s into a minute.
var fleetNow = time.Unix(1_800_000_020, 0)

// fleetDB is a FleetStore that counts its reads and answers the two-site
// fleet of the store's test (store/live_fleet_test.go), or fails.
type fleetDB struct {
	mu      sync.Mutex
	reads   int
	queries []store.LiveFleetQuery
	fail    bool
}

var twoSites = store.LiveFleet{
	All: store.LiveFleetSite{AgentsOnline: 3, AgentsTotal: 5, RxBps: 2250, TxBps: 525, Pps: 111, Flows: 10},
	Sites: []store.LiveFleetSite{
		{Site: "", AgentsOnline: 1, AgentsTotal: 1},
		{Site: "n", AgentsOnline: 1, AgentsTotal: 3, RxBps: 250, TxBps: 25, Pps: 11, Flows: 3},
		{Site: "s", AgentsOnline: 1, AgentsTotal: 1, RxBps: 2000, TxBps: 500, Pps: 100, Flows: 2},
	},
}

func (d *fleetDB) LiveFleet(_ context.Context, q store.LiveFleetQuery) (store.LiveFleet, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reads++
	d.queries = append(d.queries, q)
	if d.fail {
		return store.LiveFleet{}, errors.New("database down")
	}
	return twoSites, nil
}

func (d *fleetDB) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.reads
}

// fakeClock is a settable FleetConfig.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func fleetTicker(db FleetStore, now func() time.Time) *Ticker {
	tk := NewTicker(slog.New(slog.DiscardHandler), stillCapture{}, noSockets{}, nil, nil)
	tk.SetFleet(NewFleetSource(slog.New(slog.DiscardHandler), db, FleetConfig{Interval: 10 * time.Second, Now: now}))
	return tk
}

// fleetJSON is the tick's fleet field as sent, "" when absent.
func fleetJSON(t *testing.T, tick any) string {
	t.Helper()
	raw, err := json.Marshal(tick)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return string(m["fleet"])
}

const (
	allFleet   = `{"agents_online":3,"agents_total":5,"rx_bps":2250,"tx_bps":525,"pps":111,"netflow_fps":0.16666666666666666,"ts":1800000020}`
	siteNFleet = `{"agents_online":1,"agents_total":3,"rx_bps":250,"tx_bps":25,"pps":11,"netflow_fps":0.05,"ts":1800000020}`
	siteSFleet = `{"agents_online":1,"agents_total":1,"rx_bps":2000,"tx_bps":500,"pps":100,"netflow_fps":0.03333333333333333,"ts":1800000020}`
	noneFleet  = `{"agents_online":0,"agents_total":0,"rx_bps":0,"tx_bps":0,"pps":0,"netflow_fps":0,"ts":1800000020}`
)

// TestFleetFieldNames: the tick's fleet object has exactly the documented
// names (spec 6.1, issue 33), and a ticker without a fleet source sends
// no fleet field.
func TestFleetFieldNames(t *testing.T) {
	clock := &fakeClock{t: fleetNow}
	tick, err := fleetTicker(&fleetDB{}, clock.Now).Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := fleetJSON(t, tick); got != allFleet {
		t.Errorf("fleet %s, want %s", got, allFleet)
	}
	var fields map[string]any
	if err := json.Unmarshal([]byte(fleetJSON(t, tick)), &fields); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	if want := []string{"agents_online", "agents_total", "netflow_fps", "pps", "rx_bps", "ts", "tx_bps"}; !slices.Equal(names, want) {
		t.Errorf("fleet fields %v, want %v", names, want)
	}

	plain := NewTicker(slog.New(slog.DiscardHandler), stillCapture{}, noSockets{}, nil, nil)
	tick, err = plain.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := fleetJSON(t, tick); got != "" {
		t.Errorf("ticker without a fleet source sent fleet %s", got)
	}
}

// TestFleetCached: however many ticks ask, the database is read at most
// once per 3 s: ten ticks within 3 s are one read, the tick at 3 s the
// second.
func TestFleetCached(t *testing.T) {
	clock := &fakeClock{t: fleetNow}
	db := &fleetDB{}
	tk := fleetTicker(db, clock.Now)
	for i := range 10 {
		tick, err := tk.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := fleetJSON(t, tick); got != allFleet {
			t.Fatalf("tick %d: fleet %s", i, got)
		}
		clock.Add(299 * time.Millisecond) // ten ticks span 2.99 s
	}
	if n := db.count(); n != 1 {
		t.Errorf("%d reads for ten ticks within 3 s, want 1", n)
	}
	clock.Add(10 * time.Millisecond) // 3.0 s after the read
	if _, err := tk.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := db.count(); n != 2 {
		t.Errorf("%d reads once the summary is 3 s old, want 2", n)
	}
}

// TestFleetReadFails: a failed read never fails the tick: before any
// success the tick has no fleet, after one it keeps the last summary (its
// ts shows its age), and a failing database is asked once per 3 s, not
// every tick.
func TestFleetReadFails(t *testing.T) {
	clock := &fakeClock{t: fleetNow}
	db := &fleetDB{fail: true}
	tk := fleetTicker(db, clock.Now)
	step := func(name, want string, reads int) {
		t.Helper()
		tick, err := tk.Tick(context.Background())
		if err != nil {
			t.Fatalf("%s: tick failed: %v", name, err)
		}
		if got := fleetJSON(t, tick); got != want {
			t.Errorf("%s: fleet %q, want %q", name, got, want)
		}
		if n := db.count(); n != reads {
			t.Errorf("%s: %d reads, want %d", name, n, reads)
		}
	}
	step("first read fails", "", 1)
	clock.Add(time.Second)
	step("within 3 s of the failure", "", 1)
	clock.Add(2 * time.Second)
	db.mu.Lock()
	db.fail = false
	db.mu.Unlock()
	step("database back", strings.Replace(allFleet, "1800000020", "1800000023", 1), 2)
	db.mu.Lock()
	db.fail = true
	db.mu.Unlock()
	clock.Add(3 * time.Second)
	step("fails again: last summary kept", strings.Replace(allFleet, "1800000020", "1800000023", 1), 3)
}

// TestFleetQuery: the read asks for the agents seen within three
// telemetry intervals, the samples of the last 90 s and the last flow
// minute that ended at least 15 s ago (written after the aggregator's 5 s
// grace).
func TestFleetQuery(t *testing.T) {
	const minute = 1_800_000_000 // a minute start
	for _, tc := range []struct {
		name     string
		now      int64
		interval time.Duration
		want     store.LiveFleetQuery
	}{
		{"20 s into the minute", minute + 20, 10 * time.Second,
			store.LiveFleetQuery{OnlineSince: minute + 20 - 30, SamplesSince: minute + 20 - 90, FlowMinute: minute - 60}},
		{"15 s into the minute", minute + 15, 0, // default interval 30 s
			store.LiveFleetQuery{OnlineSince: minute + 15 - 90, SamplesSince: minute + 15 - 90, FlowMinute: minute - 60}},
		{"14 s into the minute: the previous one may be unwritten", minute + 14, 30 * time.Second,
			store.LiveFleetQuery{OnlineSince: minute + 14 - 90, SamplesSince: minute + 14 - 90, FlowMinute: minute - 120}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := &fleetDB{}
			src := NewFleetSource(slog.New(slog.DiscardHandler), db, FleetConfig{Interval: tc.interval, Now: func() time.Time { return time.Unix(tc.now, 0) }})
			src.Fleet(context.Background())
			if diff := cmp.Diff([]store.LiveFleetQuery{tc.want}, db.queries); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFleetForSite: through the broker, a client bound to site n gets
// site n's agents and flows, s its own, a site without agents zeros, a
// client of every site the whole fleet; nothing is read while nobody
// listens.
func TestFleetForSite(t *testing.T) {
	db := &fleetDB{}
	clock := &fakeClock{t: fleetNow} // frozen: every tick shows the same ts
	ks := &keySessions{valid: map[string]bool{"n": true, "s": true, "x": true, "all": true},
		sites: map[string]string{"n": "n", "s": "s", "x": "x"}}
	cfg := DefaultConfig()
	cfg.Interval = 20 * time.Millisecond
	b, srv := startBrokerWith(t, cfg, Deps{Source: fleetTicker(db, clock.Now), Sessions: ks})
	time.Sleep(5 * cfg.Interval)
	if n := db.count(); n != 0 {
		t.Fatalf("%d reads with no client, want 0", n)
	}
	want := map[string]string{"n": siteNFleet, "s": siteSFleet, "x": noneFleet, "all": allFleet}
	conns := map[string]*websocket.Conn{}
	for key := range want {
		c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), &websocket.DialOptions{HTTPHeader: map[string][]string{"X-Key": {key}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		conns[key] = c
	}
	eventuallyClients(t, b, len(want))
	for key, c := range conns {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		_, raw, err := c.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if got := fleetJSON(t, json.RawMessage(raw)); got != want[key] {
			t.Errorf("client %s: fleet %s, want %s", key, got, want[key])
		}
	}
	// The clock stands still: every tick since the first was served from
	// the one read.
	if n := db.count(); n != 1 {
		t.Errorf("%d reads, want 1", n)
	}
}
