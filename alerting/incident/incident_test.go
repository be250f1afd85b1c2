package incident

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

func ev(id, agent int64, kind string, sev int) record.AlertEvent {
	return record.AlertEvent{ID: id, AgentID: agent, Kind: kind, Severity: sev, Site: "s1", Key: kind, State: "firing"}
}

// brief is what a test compares of a match.
type brief struct {
	Rule     int
	Key      string
	Members  []int64
	Severity int
	Risk     int
	Title    string
}

func briefs(ms []Match) []brief {
	var out []brief
	for _, m := range ms {
		b := brief{Rule: m.Rule, Key: m.Key(), Severity: m.Severity, Risk: m.Risk, Title: m.Title}
		for _, e := range m.Members {
			b.Members = append(b.Members, e.ID)
		}
		out = append(out, b)
	}
	return out
}

// TestCorrelateRules: each of the five rules from a constructed event
// sequence, with exact members, severity, risk and title; events of other
// agents never mix.
func TestCorrelateRules(t *testing.T) {
	for _, tc := range []struct {
		desc   string
		events []record.AlertEvent
		want   []brief
	}{
		{"rule 1: new process + ioc", []record.AlertEvent{ev(1, 7, "proc", 4), ev(2, 7, "ioc", 8), ev(3, 8, "port", 9)},
			[]brief{{1, "r1|agent7", []int64{1, 2}, 8, 60 + 6, "agent 7: new process + new target/ioc (2 events: proc, ioc)"}}},
		{"rule 2: plus a suspicious port supersedes rule 1", []record.AlertEvent{ev(1, 7, "proc", 4), ev(2, 7, "target", 4), ev(3, 7, "port", 9)},
			[]brief{
				{2, "r2|agent7", []int64{1, 2, 3}, 9, 85 + 8, "agent 7: new process + new target/ioc + suspicious port (3 events: proc, target, port)"},
				{5, "r5|agent7", []int64{1, 2, 3}, 9, 40 + 8, "agent 7: suspicious events (3 events: proc, target, port)"},
			}},
		{"rule 3: target + bandwidth on the hub", []record.AlertEvent{ev(4, 0, "bw", 5), ev(5, 0, "target", 4)},
			[]brief{{3, "r3|agent0", []int64{4, 5}, 5, 50, "the hub: new target + bandwidth (2 events: bw, target)"}}},
		{"rule 4: anomaly + bandwidth", []record.AlertEvent{ev(6, 0, "anomaly", 6), ev(7, 0, "bw", 5), ev(8, 0, "bw", 5)},
			[]brief{{4, "r4|agent0", []int64{6, 7, 8}, 6, 45 + 5 + 2, "the hub: traffic anomaly + bandwidth (3 events: anomaly, bw)"}}},
		{"rule 5: at least 3 suspicious", []record.AlertEvent{ev(9, 3, "port", 9), ev(10, 3, "port", 9), ev(11, 3, "anomaly", 6), ev(12, 3, "iface_util", 7)},
			[]brief{{5, "r5|agent3", []int64{9, 10, 11}, 9, 40 + 8, "agent 3: suspicious events (3 events: port, anomaly)"}}},
		{"two suspicious are not enough", []record.AlertEvent{ev(9, 3, "port", 9), ev(10, 3, "iface_util", 7), ev(11, 3, "bw", 5)}, nil},
		{"risk is capped at 100", func() []record.AlertEvent {
			var evs []record.AlertEvent
			for i := range 8 {
				evs = append(evs, ev(int64(20+i), 5, "port", 10))
			}
			return append(evs, ev(40, 5, "proc", 4), ev(41, 5, "ioc", 8))
		}(), []brief{
			{2, "r2|agent5", []int64{20, 21, 22, 23, 24, 25, 26, 27, 40, 41}, 10, 100, "agent 5: new process + new target/ioc + suspicious port (10 events: port, proc, ioc)"},
			{5, "r5|agent5", []int64{20, 21, 22, 23, 24, 25, 26, 27, 40, 41}, 10, 40 + 35 + 10, "agent 5: suspicious events (10 events: port, proc, ioc)"},
		}},
	} {
		if diff := cmp.Diff(briefs(Correlate(tc.events, 3)), tc.want); diff != "" {
			t.Errorf("%s (-got, +want):\n%s", tc.desc, diff)
		}
	}
}

func TestNext(t *testing.T) {
	for _, tc := range []struct {
		from, op, to string
		ok           bool
	}{
		{"open", "ack", "ack", true}, {"ack", "ack", "", false},
		{"open", "investigate", "investigating", true}, {"ack", "investigate", "investigating", true}, {"investigating", "investigate", "", false},
		{"investigating", "resolve", "resolved", true}, {"resolved", "resolve", "", false},
		{"resolved", "close", "closed", true}, {"open", "close", "closed", true}, {"closed", "close", "", false},
		{"resolved", "ack", "", false}, {"open", "reopen", "", false},
	} {
		to, err := Next(tc.from, tc.op)
		if to != tc.to || (err == nil) != tc.ok {
			t.Errorf("Next(%s, %s) = %q, %v", tc.from, tc.op, to, err)
		}
	}
}

// TestCorrelatorStore: on both databases, one open incident per key; a
// repeat adds members and raises severity and risk, never lowers them;
// once resolved, the key's next match opens a new incident.
func TestCorrelatorStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clock := time.Unix(1_800_000_000, 0)
		insert := func(kind string, sev int) record.AlertEvent {
			e, err := db.InsertAlertEvent(ctx, record.AlertEvent{TS: clock.Unix(), Kind: kind, Key: kind + "-" + clock.String(), Severity: sev, State: "firing", AgentID: 0})
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		c := New(slog.New(slog.DiscardHandler), DefaultConfig(), db, nil, func() time.Time { return clock }, nil)
		run := func() []record.Incident {
			incs, err := c.RunOnce(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return incs
		}
		e1, e2 := insert("anomaly", 6), insert("bw", 5)
		got := run()
		if len(got) != 1 || got[0].Key != "r4|agent0" || got[0].Severity != 6 || got[0].Risk != 47 || got[0].State != "open" {
			t.Fatalf("first run: %+v", got)
		}
		first := got[0].ID
		if again := run(); len(again) != 1 || again[0].ID != first || again[0].Risk != 47 {
			t.Fatalf("same window again: %+v", again)
		}

		// A worse anomaly: severity and risk rise on the same incident.
		clock = clock.Add(time.Minute)
		e3 := insert("anomaly", 9)
		got = run()
		if len(got) != 1 || got[0].ID != first || got[0].Severity != 9 || got[0].Risk != 45+5+8 {
			t.Fatalf("after a worse event: %+v", got)
		}
		// The worse events leave the window: the match is milder, the
		// incident keeps its severity and risk.
		clock = clock.Add(11 * time.Minute)
		insert("anomaly", 6)
		insert("bw", 5)
		got = run()
		if len(got) != 1 || got[0].ID != first || got[0].Severity != 9 || got[0].Risk != 58 {
			t.Fatalf("after a milder repeat: %+v", got)
		}
		members, err := db.IncidentEvents(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		if len(members) != 5 || members[0].ID != e1.ID || members[1].ID != e2.ID || members[2].ID != e3.ID {
			t.Fatalf("members: %+v", members)
		}
		open, err := db.ListIncidents(ctx, store.IncidentFilter{})
		if err != nil || len(open) != 1 {
			t.Fatalf("incidents: %+v, %v", open, err)
		}

		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetIncidentState(ctx, first, "resolved", clock.Unix()) }); err != nil {
			t.Fatal(err)
		}
		got = run()
		if len(got) != 1 || got[0].ID == first || got[0].State != "open" || got[0].Severity != 6 {
			t.Fatalf("after resolve: %+v", got)
		}
		resolved, err := db.Incident(ctx, first)
		if err != nil || resolved.State != "resolved" || resolved.ClosedTS != clock.Unix() {
			t.Fatalf("resolved incident: %+v, %v", resolved, err)
		}
	})
}

// panicStore panics on its first read, then answers an empty window.
type panicStore struct {
	calls atomic.Int32
}

func (p *panicStore) RecentAlertEvents(context.Context, int64) ([]record.AlertEvent, error) {
	if p.calls.Add(1) == 1 {
		// An index out of range: a real runtime panic.
		_ = []int{}[int(p.calls.Load())]
	}
	return nil, nil
}

func (p *panicStore) UpsertIncident(context.Context, record.Incident, []int64) (record.Incident, bool, error) {
	return record.Incident{}, false, nil
}

// TestCorrelatorSurvivesPanic: a run that panics is counted and logged;
// the loop runs again on its next tick (RELIABILITY case 33).
func TestCorrelatorSurvivesPanic(t *testing.T) {
	st := &panicStore{}
	reg := prometheus.NewRegistry()
	cfg := DefaultConfig()
	cfg.Enabled, cfg.Every = true, 10*time.Millisecond
	c := New(slog.New(slog.DiscardHandler), cfg, st, nil, nil, reg)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for st.calls.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := st.calls.Load(); n < 3 {
		t.Fatalf("%d runs, want the loop to go on after the panic", n)
	}
	if got := testutil.ToFloat64(c.m.panics); got != 1 {
		t.Errorf("netmon_incidents_panics_total = %v, want 1", got)
	}
}

// TestCorrelatorOnlyOnLeader (spec 6.4, issue 33): a replica that does
// not lead runs no correlation; once it leads, it does.
func TestCorrelatorOnlyOnLeader(t *testing.T) {
	st := &panicStore{}
	st.calls.Store(1) // past the panicking first call
	cfg := DefaultConfig()
	cfg.Enabled, cfg.Every = true, 10*time.Millisecond
	c := New(slog.New(slog.DiscardHandler), cfg, st, nil, nil, nil)
	var leads atomic.Bool
	c.IsLeader = leads.Load
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	time.Sleep(100 * time.Millisecond)
	if n := st.calls.Load(); n != 1 {
		t.Fatalf("%d correlations while not leading, want 0", n-1)
	}
	leads.Store(true)
	deadline := time.Now().Add(5 * time.Second)
	for st.calls.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := st.calls.Load(); n < 3 {
		t.Errorf("%d correlations once leading, want some", n-1)
	}
}
