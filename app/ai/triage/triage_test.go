package triage

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/ai"
	"netmon/store"
	"netmon/store/storetest"
)

var t0 = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

// newTriage builds an enabled triage on db with its own registry.
func newTriage(db *store.DB, cfg ai.TriageConfig, an ai.Analyst, clk *clock, mod func(*Deps)) (*Triage, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	cfg.Enabled = true
	d := Deps{DB: db, Analyst: an, Registerer: reg, Now: clk.Now}
	if mod != nil {
		mod(&d)
	}
	return New(nil, cfg, d), reg
}

func mustRun(t *testing.T, tr *Triage) {
	t.Helper()
	if err := tr.RunOnce(t.Context()); err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
}

func TestTriageAssessesAtOrAboveMinSeverity(t *testing.T) {
	tests := []struct {
		desc        string
		minSeverity int
		// history is seeded before the first pass (never assessed);
		// incidents and alerts after it, by severity.
		history           []int
		incidents, alerts []int
		// wantInc and wantAl index incidents and alerts.
		wantInc, wantAl []int
	}{
		{desc: "min 7 keeps 7 and above of both kinds", minSeverity: 7, incidents: []int{3, 7, 9}, alerts: []int{6, 10, 2, 8},
			wantInc: []int{1, 2}, wantAl: []int{1, 3}},
		{desc: "min 0 assesses everything", minSeverity: 0, incidents: []int{0, 5}, alerts: []int{1}, wantInc: []int{0, 1}, wantAl: []int{0}},
		{desc: "nothing reaches min 10", minSeverity: 10, incidents: []int{9, 2}, alerts: []int{9}},
		{desc: "history before the first pass is not assessed", minSeverity: 7, history: []int{9, 10, 8},
			incidents: []int{9}, alerts: []int{7}, wantInc: []int{0}, wantAl: []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				clk := &clock{t: t0}
				an := &fakeAnalyst{text: "benign"}
				tr, reg := newTriage(db, ai.TriageConfig{MinSeverity: tt.minSeverity, MaxPerHour: 100}, an, clk, nil)
				for _, s := range tt.history {
					seed(t, db, ai.ScopeIncident, s, clk.Now().Unix())
					seed(t, db, ai.ScopeAnomaly, s, clk.Now().Unix())
				}
				mustRun(t, tr)
				if n := len(an.Calls()); n != 0 {
					t.Fatalf("the first pass made %d Analyze calls, want 0 (it only sets the cursor)", n)
				}
				var incRefs, alRefs []string
				for _, s := range tt.incidents {
					incRefs = append(incRefs, seed(t, db, ai.ScopeIncident, s, clk.Now().Unix()))
				}
				for _, s := range tt.alerts {
					alRefs = append(alRefs, seed(t, db, ai.ScopeAnomaly, s, clk.Now().Unix()))
				}
				clk.Add(15 * time.Second)
				mustRun(t, tr)
				want := []string{}
				for _, i := range tt.wantInc {
					want = append(want, ai.ScopeIncident+":"+incRefs[i])
				}
				for _, i := range tt.wantAl {
					want = append(want, ai.ScopeAnomaly+":"+alRefs[i])
				}
				if diff := cmp.Diff(an.refs(), want); diff != "" {
					t.Errorf("Analyze calls (-got, +want):\n%s", diff)
				}
				for _, c := range an.Calls() {
					if c.who != Actor() || c.source != ai.SourceTriage || c.task != Task || c.scope.Site != "" {
						t.Errorf("call %+v: want actor ai-triage/system, source triage, the fixed task, every site", c)
					}
				}
				if got := counter(t, reg, "netmon_ai_triage_assessed_total", map[string]string{"scope": "incident"}); got != float64(len(tt.wantInc)) {
					t.Errorf("assessed{incident} = %v, want %d", got, len(tt.wantInc))
				}
				if got := counter(t, reg, "netmon_ai_triage_assessed_total", map[string]string{"scope": "anomaly"}); got != float64(len(tt.wantAl)) {
					t.Errorf("assessed{anomaly} = %v, want %d", got, len(tt.wantAl))
				}
				// A second pass finds nothing new.
				mustRun(t, tr)
				if n := len(an.Calls()); n != len(want) {
					t.Errorf("after a second pass %d calls, want %d (no re-assessment)", n, len(want))
				}
			})
		})
	}
}

func TestTriageHourlyCap(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := &clock{t: t0}
		an := &fakeAnalyst{text: "benign"}
		tr, reg := newTriage(db, ai.TriageConfig{MinSeverity: 7, MaxPerHour: 3}, an, clk, nil)
		mustRun(t, tr)
		steps := []struct {
			desc              string
			at                time.Duration // after t0
			incidents, alerts int           // new ones, severity 9
			wantCalls         int           // in all
			wantDropped       float64       // in all
		}{
			{desc: "a burst of 7: three assessed, four dropped", at: 0, incidents: 5, alerts: 2, wantCalls: 3, wantDropped: 4},
			{desc: "a pass with nothing new drops nothing", at: time.Minute, wantCalls: 3, wantDropped: 4},
			{desc: "half an hour later the hour is still full", at: 30 * time.Minute, alerts: 1, wantCalls: 3, wantDropped: 5},
			{desc: "an hour after the burst the window is free again", at: time.Hour + time.Second, incidents: 2, wantCalls: 5, wantDropped: 5},
			{desc: "the window slides: two of the last hour leave room for one", at: 70 * time.Minute, alerts: 2, wantCalls: 6, wantDropped: 6},
		}
		for _, st := range steps {
			clk.Set(t0.Add(st.at))
			for range st.incidents {
				seed(t, db, ai.ScopeIncident, 9, clk.Now().Unix())
			}
			for range st.alerts {
				seed(t, db, ai.ScopeAnomaly, 9, clk.Now().Unix())
			}
			mustRun(t, tr)
			if n := len(an.Calls()); n != st.wantCalls {
				t.Errorf("%s: %d Analyze calls in all, want %d", st.desc, n, st.wantCalls)
			}
			if got := counter(t, reg, "netmon_ai_triage_dropped_total", nil); got != st.wantDropped {
				t.Errorf("%s: netmon_ai_triage_dropped_total = %v, want %v", st.desc, got, st.wantDropped)
			}
		}
	})
}

func TestTriageRestartDoesNotReassess(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := &clock{t: t0}
		cfg := ai.TriageConfig{MinSeverity: 7, MaxPerHour: 4}
		a := &fakeAnalyst{text: "a"}
		first, _ := newTriage(db, cfg, a, clk, nil)
		mustRun(t, first)
		for range 3 {
			seed(t, db, ai.ScopeIncident, 8, clk.Now().Unix())
		}
		mustRun(t, first)
		if n := len(a.Calls()); n != 3 {
			t.Fatalf("first hub: %d calls, want 3", n)
		}
		// The restart: a new component (new registry, new analyst) on the
		// same database.
		clk.Add(time.Minute)
		b := &fakeAnalyst{text: "b"}
		second, reg := newTriage(db, cfg, b, clk, nil)
		mustRun(t, second)
		if n := len(b.Calls()); n != 0 {
			t.Fatalf("after the restart %d calls (%v), want 0", n, b.refs())
		}
		// The hour's window is stored too: of two new ones, one fits under 4.
		ref := seed(t, db, ai.ScopeAnomaly, 9, clk.Now().Unix())
		seed(t, db, ai.ScopeAnomaly, 9, clk.Now().Unix())
		mustRun(t, second)
		if diff := cmp.Diff(b.refs(), []string{"anomaly:" + ref}); diff != "" {
			t.Errorf("after the restart (-got, +want):\n%s", diff)
		}
		if got := counter(t, reg, "netmon_ai_triage_dropped_total", nil); got != 1 {
			t.Errorf("dropped after the restart = %v, want 1", got)
		}
	})
}

func TestTriageNotLeader(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := &clock{t: t0}
		an := &fakeAnalyst{text: "x"}
		var leader atomic.Bool
		tr, _ := newTriage(db, ai.TriageConfig{MinSeverity: 0, MaxPerHour: 10}, an, clk, func(d *Deps) { d.IsLeader = leader.Load })
		seed(t, db, ai.ScopeIncident, 9, clk.Now().Unix())
		mustRun(t, tr)
		if n := len(an.Calls()); n != 0 {
			t.Errorf("not the leader: %d calls, want 0", n)
		}
		if _, err := db.GetSetting(t.Context(), CursorKey); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("not the leader: the cursor was touched (GetSetting error %v, want not found)", err)
		}
		leader.Store(true)
		mustRun(t, tr) // sets the cursor past what came before
		ref := seed(t, db, ai.ScopeIncident, 9, clk.Now().Unix())
		mustRun(t, tr)
		if diff := cmp.Diff(an.refs(), []string{"incident:" + ref}); diff != "" {
			t.Errorf("leader (-got, +want):\n%s", diff)
		}
	})
}

func TestTriageAnalystFailuresAreCountedNotFatal(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := &clock{t: t0}
		an := &fakeAnalyst{text: "x", fail: map[string]bool{}, panics: map[string]bool{}}
		tr, reg := newTriage(db, ai.TriageConfig{MinSeverity: 7, MaxPerHour: 10}, an, clk, nil)
		mustRun(t, tr)
		var refs []string
		for range 4 {
			refs = append(refs, seed(t, db, ai.ScopeIncident, 9, clk.Now().Unix()))
		}
		an.panics[refs[1]] = true
		an.fail[refs[2]] = true
		mustRun(t, tr)
		if n := len(an.Calls()); n != 4 {
			t.Fatalf("%d calls, want 4: a panic or an error does not stop the pass", n)
		}
		for _, c := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"netmon_ai_triage_assessed_total", map[string]string{"scope": "incident"}, 2},
			{"netmon_ai_triage_errors_total", map[string]string{"scope": "incident"}, 2},
			{"netmon_panics_total", map[string]string{"component": "ai_triage"}, 1},
		} {
			if got := counter(t, reg, c.name, c.labels); got != c.want {
				t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
			}
		}
		// Failed items are not retried.
		mustRun(t, tr)
		if n := len(an.Calls()); n != 4 {
			t.Errorf("after another pass %d calls, want 4", n)
		}
	})
}

func TestTriageSkips(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := &clock{t: t0}
		an := &fakeAnalyst{text: "x"}
		conv := fakeConversations{}
		tr, reg := newTriage(db, ai.TriageConfig{MinSeverity: 7, MaxPerHour: 10}, an, clk, func(d *Deps) { d.Conversations = conv })
		mustRun(t, tr)
		done := seed(t, db, ai.ScopeIncident, 9, clk.Now().Unix())
		conv["incident:"+done] = true
		fresh := seed(t, db, ai.ScopeIncident, 9, clk.Now().Unix())
		seed(t, db, ai.ScopeAnomaly, 9, clk.Now().Add(-2*time.Hour).Unix()) // fired two hours ago
		alert := seed(t, db, ai.ScopeAnomaly, 9, clk.Now().Unix())
		mustRun(t, tr)
		if diff := cmp.Diff(an.refs(), []string{"incident:" + fresh, "anomaly:" + alert}); diff != "" {
			t.Errorf("Analyze calls (-got, +want):\n%s", diff)
		}
		for reason, want := range map[string]float64{"assessed": 1, "stale": 1} {
			if got := counter(t, reg, "netmon_ai_triage_skipped_total", map[string]string{"reason": reason}); got != want {
				t.Errorf("skipped{%s} = %v, want %v", reason, got, want)
			}
		}
	})
}

// A damaged cursor document is replaced: history is not assessed, what
// comes next is.
func TestTriageDamagedCursor(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := &clock{t: t0}
		an := &fakeAnalyst{text: "x"}
		tr, _ := newTriage(db, ai.TriageConfig{MinSeverity: 7, MaxPerHour: 10}, an, clk, nil)
		seed(t, db, ai.ScopeIncident, 9, clk.Now().Unix())
		if err := db.PutSetting(t.Context(), CursorKey, "{not json"); err != nil {
			t.Fatal(err)
		}
		mustRun(t, tr)
		ref := seed(t, db, ai.ScopeIncident, 9, clk.Now().Unix())
		mustRun(t, tr)
		if diff := cmp.Diff(an.refs(), []string{"incident:" + ref}); diff != "" {
			t.Errorf("Analyze calls (-got, +want):\n%s", diff)
		}
		v, err := db.GetSetting(t.Context(), CursorKey)
		if err != nil || !strings.HasPrefix(v, `{"incident":`+ref+`,`) {
			t.Errorf("cursor after repair = %q, %v", v, err)
		}
	})
}

// Two hubs on one database, passing at the same moment: each item is
// assessed once in all.
func TestTriageTwoHubsAssessOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := &clock{t: t0}
		cfg := ai.TriageConfig{MinSeverity: 0, MaxPerHour: 100}
		a, b := &fakeAnalyst{text: "a"}, &fakeAnalyst{text: "b"}
		ha, _ := newTriage(db, cfg, a, clk, nil)
		hb, _ := newTriage(db, cfg, b, clk, nil)
		mustRun(t, ha)
		var want []string
		for i := range 8 {
			kind := ai.ScopeIncident
			if i%2 == 1 {
				kind = ai.ScopeAnomaly
			}
			want = append(want, kind+":"+seed(t, db, kind, 5, clk.Now().Unix()))
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, tr := range []*Triage{ha, hb} {
			wg.Go(func() { errs[i] = tr.RunOnce(t.Context()) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		got := append(a.refs(), b.refs()...)
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("assessed by either hub (-got, +want):\n%s", diff)
		}
	})
}

func TestTriageStartStop(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		an := &fakeAnalyst{text: "x"}
		off := New(nil, ai.TriageConfig{Enabled: false}, Deps{DB: db, Analyst: an, Tick: 10 * time.Millisecond})
		if err := off.Start(); err != nil {
			t.Fatalf("Start disabled: %v", err)
		}
		if err := off.Stop(); err != nil {
			t.Fatal(err)
		}
		tr := New(nil, ai.TriageConfig{Enabled: true, MinSeverity: 7, MaxPerHour: 10}, Deps{DB: db, Analyst: an, Tick: 10 * time.Millisecond})
		if err := tr.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tr.Stop() }()
		// The first pass sets the cursor; what comes after is assessed.
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := db.GetSetting(t.Context(), CursorKey); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no cursor after 10 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		ref := seed(t, db, ai.ScopeIncident, 9, time.Now().Unix())
		for len(an.Calls()) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		_ = tr.Stop()
		if diff := cmp.Diff(an.refs(), []string{"incident:" + ref}); diff != "" {
			t.Errorf("Analyze calls of the running loop (-got, +want):\n%s", diff)
		}
		if err := New(nil, ai.TriageConfig{Enabled: true}, Deps{}).Start(); err == nil {
			t.Error("Start without a store or an analyst: no error")
		}
	})
}
