package alerting_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"netmon/alerting"
	"netmon/alerting/rules"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// clock is the injected time of the engine tests.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Unix(1_800_000_000, 0)} }
func quiet() *slog.Logger                { return slog.New(slog.DiscardHandler) }
func bwAlert(key string) rules.Alert {
	return rules.Alert{Kind: "bw", Key: key, Severity: 5, Message: "m"}
}
func portAlert(site, key string) rules.Alert {
	return rules.Alert{Kind: "port", Key: key, Site: site, Severity: 9}
}

func newEngine(t *testing.T, db *store.DB, c *clock, s alerting.Settings, deps alerting.Deps) *alerting.Engine {
	t.Helper()
	deps.Store, deps.Now = db, c.now
	deps.Settings = func(context.Context) (alerting.Settings, error) { return s, nil }
	cfg := alerting.DefaultConfig()
	cfg.Enabled = false // the tests drive the evaluations themselves
	e := alerting.New(quiet(), cfg, deps, nil)
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Stop() })
	return e
}

func events(t *testing.T, db *store.DB) []record.AlertEvent {
	t.Helper()
	evs, err := db.ListAlertEvents(context.Background(), store.AlertFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestLifecycle: exact counts of the lifecycle of spec 3 with an injected
// clock, on both databases.
func TestLifecycle(t *testing.T) {
	type step struct {
		advance time.Duration
		raise   []rules.Alert
		sweep   bool // run EvalSnapshot (auto-resolve)
	}
	tests := []struct {
		desc     string
		settings func(*alerting.Settings)
		silence  *record.AlertSilence // relative to the clock's start
		steps    []step
		want     []record.AlertEvent // newest first: kind, key, state, count
	}{
		{desc: "a repeat while firing increments count, no new row",
			steps: []step{{raise: []rules.Alert{bwAlert("hub|in")}}, {advance: time.Second, raise: []rules.Alert{bwAlert("hub|in")}}, {advance: time.Minute, raise: []rules.Alert{bwAlert("hub|in")}}},
			want:  []record.AlertEvent{{Kind: "bw", Key: "hub|in", State: "firing", Count: 3}}},
		{desc: "other keys are other events",
			steps: []step{{raise: []rules.Alert{bwAlert("hub|in"), bwAlert("hub|out")}}},
			want:  []record.AlertEvent{{Kind: "bw", Key: "hub|out", State: "firing", Count: 1}, {Kind: "bw", Key: "hub|in", State: "firing", Count: 1}}},
		{desc: "auto-resolve after auto_resolve_min, then cooldown suppresses, then a new row",
			settings: func(s *alerting.Settings) { s.AutoResolveMin = 2; s.CooldownMin = 10 },
			steps: []step{
				{raise: []rules.Alert{bwAlert("k")}},
				{advance: 119 * time.Second, sweep: true},                       // not yet
				{advance: time.Second, sweep: true},                             // resolved at 2 min
				{advance: time.Minute, raise: []rules.Alert{bwAlert("k")}},      // 3 min: inside the cooldown
				{advance: 7 * time.Minute, raise: []rules.Alert{bwAlert("k")}}}, // 10 min: a new event
			want: []record.AlertEvent{{Kind: "bw", Key: "k", State: "firing", Count: 1}, {Kind: "bw", Key: "k", State: "resolved", Count: 1}}},
		{desc: "auto_resolve_min 0 never resolves",
			steps: []step{{raise: []rules.Alert{bwAlert("k")}}, {advance: 24 * time.Hour, sweep: true}},
			want:  []record.AlertEvent{{Kind: "bw", Key: "k", State: "firing", Count: 1}}},
		{desc: "a matching silence suppresses; another site is not silenced",
			silence: &record.AlertSilence{Kind: "port", Site: "a", Key: "7|*", End: 600},
			steps:   []step{{raise: []rules.Alert{portAlert("a", "7|198.51.100.1:4444"), portAlert("b", "7|198.51.100.1:4444"), portAlert("a", "8|198.51.100.1:4444")}}},
			want:    []record.AlertEvent{{Kind: "port", Key: "8|198.51.100.1:4444", State: "firing", Count: 1}, {Kind: "port", Key: "7|198.51.100.1:4444", State: "firing", Count: 1}}},
		{desc: "an expired silence stops matching by itself",
			silence: &record.AlertSilence{Kind: "bw", End: 60},
			steps:   []step{{raise: []rules.Alert{bwAlert("k")}}, {advance: time.Minute, raise: []rules.Alert{bwAlert("k")}}},
			want:    []record.AlertEvent{{Kind: "bw", Key: "k", State: "firing", Count: 1}}},
		{desc: "alerting disabled stores nothing",
			settings: func(s *alerting.Settings) { s.Enabled = false },
			steps:    []step{{raise: []rules.Alert{bwAlert("k")}}}},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for i, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				c := newClock()
				c.advance(time.Duration(i) * 24 * time.Hour) // rows of earlier cases are older
				ctx := context.Background()
				if _, err := db.Writer().ExecContext(ctx, `DELETE FROM alert_events`); err != nil {
					t.Fatal(err)
				}
				if _, err := db.Writer().ExecContext(ctx, `DELETE FROM alert_silences`); err != nil {
					t.Fatal(err)
				}
				if tt.silence != nil {
					sl := *tt.silence
					sl.Start, sl.End = c.t.Unix()+sl.Start, c.t.Unix()+sl.End
					if err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.InsertAlertSilence(ctx, sl); return err }); err != nil {
						t.Fatal(err)
					}
				}
				s := alerting.DefaultSettings()
				if tt.settings != nil {
					tt.settings(&s)
				}
				e := newEngine(t, db, c, s, alerting.Deps{})
				for _, st := range tt.steps {
					c.advance(st.advance)
					e.Raise(ctx, st.raise...)
					if st.sweep {
						e.EvalSnapshot(ctx)
					}
				}
				got := events(t, db)
				if len(got) != len(tt.want) {
					t.Fatalf("%d events, want %d: %+v", len(got), len(tt.want), got)
				}
				for j, w := range tt.want {
					g := got[j]
					if g.Kind != w.Kind || g.Key != w.Key || g.State != w.State || g.Count != w.Count {
						t.Errorf("event %d = %s %s %s count %d, want %s %s %s count %d", j, g.Kind, g.Key, g.State, g.Count, w.Kind, w.Key, w.State, w.Count)
					}
				}
			})
		}
	})
}

// TestRestartKeepsCounting: a new engine on the same database counts
// repeats of the open event instead of storing a new row.
func TestRestartKeepsCounting(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock()
		ctx := context.Background()
		e := newEngine(t, db, c, alerting.DefaultSettings(), alerting.Deps{})
		e.Raise(ctx, bwAlert("k"))
		_ = e.Stop()
		e2 := newEngine(t, db, c, alerting.DefaultSettings(), alerting.Deps{})
		c.advance(time.Second)
		e2.Raise(ctx, bwAlert("k"))
		got := events(t, db)
		if len(got) != 1 || got[0].Count != 2 {
			t.Errorf("after restart: %+v", got)
		}
	})
}

// TestAckThenResolve: an acknowledged event still counts repeats; a
// resolved one closes.
func TestAckThenResolve(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock()
		ctx := context.Background()
		s := alerting.DefaultSettings()
		s.CooldownMin = 1
		e := newEngine(t, db, c, s, alerting.Deps{})
		e.Raise(ctx, bwAlert("k"))
		ev := events(t, db)[0]
		ev.State = record.AlertAck
		e.StateChanged(ev)
		e.Raise(ctx, bwAlert("k"))
		ev.State = record.AlertResolved
		e.StateChanged(ev)
		c.advance(2 * time.Minute)
		e.Raise(ctx, bwAlert("k"))
		got := events(t, db)
		if len(got) != 2 || got[1].Count != 2 || got[0].Count != 1 {
			t.Errorf("events: %+v", got)
		}
		if d := e.Drain(); len(d) != 2 || d[0].ID != got[1].ID || d[1].ID != got[0].ID {
			t.Errorf("drain: %+v", d)
		}
		if d := e.Drain(); len(d) != 0 {
			t.Errorf("second drain: %+v", d)
		}
	})
}
