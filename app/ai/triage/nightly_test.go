package triage

import (
	"errors"
	"strconv"
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

const summary = "Quiet night: 2 port scans from 10.0.0.9, both blocked.\nCheck agent web-1 first."

func newNightly(db *store.DB, cfg ai.NightlyConfig, an ai.Analyst, m Mailer, clk *clock, mod func(*NightlyDeps)) (*Nightly, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	cfg.Enabled = true
	d := NightlyDeps{DB: db, Analyst: an, Mailer: m, Registerer: reg, Now: clk.Now}
	if mod != nil {
		mod(&d)
	}
	return NewNightly(nil, cfg, d), reg
}

func runNightly(t *testing.T, n *Nightly) bool {
	t.Helper()
	ran, err := n.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return ran
}

func TestNightlyRunsEachSlotOnce(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := &clock{t: time.Date(2026, 11, 27, 20, 0, 0, 0, paris)}
		cfg := ai.NightlyConfig{Spec: "daily:07:00"}
		an := &fakeAnalyst{text: summary}
		loc := func(d *NightlyDeps) { d.Location = paris }
		a, regA := newNightly(db, cfg, an, nil, clk, loc)
		b, regB := newNightly(db, cfg, an, nil, clk, loc)
		steps := []struct {
			desc      string
			at        time.Time
			wantCalls int // in all, of both hubs
		}{
			{desc: "the first check only records the last slot", at: time.Date(2026, 11, 27, 20, 0, 0, 0, paris), wantCalls: 0},
			{desc: "before the slot nothing runs", at: time.Date(2026, 11, 28, 6, 59, 59, 0, paris), wantCalls: 0},
			{desc: "at the slot one hub of two runs it", at: time.Date(2026, 11, 28, 7, 0, 0, 0, paris), wantCalls: 1},
			{desc: "later that day nothing more", at: time.Date(2026, 11, 28, 18, 0, 0, 0, paris), wantCalls: 1},
			{desc: "after two days down, one run catches up", at: time.Date(2026, 12, 1, 9, 30, 0, 0, paris), wantCalls: 2},
		}
		for _, st := range steps {
			clk.Set(st.at)
			// Both hubs at the same moment.
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i, n := range []*Nightly{a, b} {
				wg.Go(func() { _, errs[i] = n.RunOnce(t.Context()) })
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("%s: %v", st.desc, err)
			}
			if n := len(an.Calls()); n != st.wantCalls {
				t.Errorf("%s: %d Analyze calls in all, want %d", st.desc, n, st.wantCalls)
			}
		}
		ok := counter(t, regA, "netmon_ai_nightly_runs_total", map[string]string{"outcome": "ok"}) +
			counter(t, regB, "netmon_ai_nightly_runs_total", map[string]string{"outcome": "ok"})
		if ok != 2 {
			t.Errorf("runs{ok} of both hubs = %v, want 2", ok)
		}
		for _, c := range an.Calls() {
			if c.who != NightlyActor() || c.scope != (ai.Scope{Kind: ai.ScopeFleet}) || c.source != ai.SourceNightly || !strings.Contains(c.task, "the last 24 hours") {
				t.Errorf("call %+v: want ai-nightly, fleet, nightly, the day's summary", c)
			}
		}
		v, err := db.GetSetting(t.Context(), SlotKey)
		if want := time.Date(2026, 12, 1, 7, 0, 0, 0, paris).Unix(); err != nil || v != strconv.FormatInt(want, 10) {
			t.Errorf("stored slot = %q, %v; want %d", v, err, want)
		}
		// A restart (a new component on the same database) does not run
		// the claimed slot again.
		c, _ := newNightly(db, cfg, an, nil, clk, loc)
		if runNightly(t, c) || len(an.Calls()) != 2 {
			t.Errorf("after a restart: ran again (%d calls in all, want 2)", len(an.Calls()))
		}
	})
}

func TestNightlyMail(t *testing.T) {
	tests := []struct {
		desc       string
		spec       string
		recipients []string
		mailErr    error
		nilMailer  bool
		wantMails  int
		wantSent   float64
		wantFailed float64
	}{
		{desc: "mailed to the recipients", spec: "daily:07:00", recipients: []string{"soc@example.org", "ops@example.org"}, wantMails: 1, wantSent: 1},
		{desc: "no recipients: only stored", spec: "daily:07:00"},
		{desc: "the mail fails: counted, the run is ok", spec: "weekly:sat:07:00", recipients: []string{"soc@example.org"},
			mailErr: errors.New("connection refused"), wantMails: 1, wantFailed: 1},
		{desc: "no mailer: counted as failed", spec: "interval:60", recipients: []string{"soc@example.org"}, nilMailer: true, wantFailed: 1},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				clk := &clock{t: time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)}
				an := &fakeAnalyst{text: summary}
				mailer := &fakeMailer{err: tt.mailErr}
				var m Mailer = mailer
				if tt.nilMailer {
					m = nil
				}
				n, reg := newNightly(db, ai.NightlyConfig{Spec: tt.spec, Recipients: tt.recipients}, an, m, clk, nil)
				runNightly(t, n) // the first check
				clk.Set(time.Date(2026, 11, 28, 7, 0, 5, 0, time.UTC))
				if !runNightly(t, n) {
					t.Fatal("the 07:00 slot did not run")
				}
				if got := counter(t, reg, "netmon_ai_nightly_runs_total", map[string]string{"outcome": "ok"}); got != 1 {
					t.Errorf("runs{ok} = %v, want 1", got)
				}
				if got := counter(t, reg, "netmon_ai_nightly_mails_total", map[string]string{"outcome": "sent"}); got != tt.wantSent {
					t.Errorf("mails{sent} = %v, want %v", got, tt.wantSent)
				}
				if got := counter(t, reg, "netmon_ai_nightly_mails_total", map[string]string{"outcome": "failed"}); got != tt.wantFailed {
					t.Errorf("mails{failed} = %v, want %v", got, tt.wantFailed)
				}
				if tt.nilMailer {
					return
				}
				mails := mailer.Mails()
				if len(mails) != tt.wantMails {
					t.Fatalf("%d mails, want %d", len(mails), tt.wantMails)
				}
				if tt.wantMails == 0 {
					return
				}
				got := mails[0]
				if diff := cmp.Diff(got.to, tt.recipients); diff != "" {
					t.Errorf("to (-got, +want):\n%s", diff)
				}
				if !strings.Contains(got.body, summary) || string(got.data) != summary {
					t.Errorf("the mail does not carry the summary: body %q, attachment %q", got.body, got.data)
				}
				if got.filename != "netmon-ai-summary-20261128-0700.txt" || got.contentType != "text/plain; charset=utf-8" {
					t.Errorf("attachment %q (%s)", got.filename, got.contentType)
				}
				name := map[string]string{"daily:07:00": "daily", "weekly:sat:07:00": "weekly"}[tt.spec]
				if want := "[netmon] AI " + name + " summary, 2026-11-28 07:00 UTC"; got.subject != want {
					t.Errorf("subject %q, want %q", got.subject, want)
				}
			})
		})
	}
}

func TestNightlyFailuresAndLeader(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := &clock{t: time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)}
		an := &fakeAnalyst{text: summary, panics: map[string]bool{"": true}} // the fleet scope's ref is ""
		var leader atomic.Bool
		n, reg := newNightly(db, ai.NightlyConfig{Spec: "daily:07:00"}, an, &fakeMailer{}, clk, func(d *NightlyDeps) { d.IsLeader = leader.Load })
		// Not the leader: nothing, not even the first check.
		runNightly(t, n)
		if _, err := db.GetSetting(t.Context(), SlotKey); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("not the leader: the slot was touched (GetSetting error %v)", err)
		}
		leader.Store(true)
		runNightly(t, n)
		clk.Set(time.Date(2026, 11, 28, 7, 1, 0, 0, time.UTC))
		if !runNightly(t, n) {
			t.Fatal("the slot did not run")
		}
		if got := counter(t, reg, "netmon_ai_nightly_runs_total", map[string]string{"outcome": "failed"}); got != 1 {
			t.Errorf("runs{failed} = %v, want 1", got)
		}
		if got := counter(t, reg, "netmon_panics_total", map[string]string{"component": "ai_nightly"}); got != 1 {
			t.Errorf("panics{ai_nightly} = %v, want 1", got)
		}
		// The failed slot stays claimed: not retried.
		clk.Add(time.Minute)
		if runNightly(t, n) || len(an.Calls()) != 1 {
			t.Errorf("the failed slot ran again (%d calls)", len(an.Calls()))
		}
	})
}

func TestNightlyStart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		an := &fakeAnalyst{text: summary}
		bad := NewNightly(nil, ai.NightlyConfig{Enabled: true, Spec: "nightly"}, NightlyDeps{DB: db, Analyst: an})
		err := bad.Start()
		const want = `start ai nightly summary: ai.nightly.spec "nightly": must be daily:HH:MM, weekly:<mon|tue|wed|thu|fri|sat|sun>:HH:MM or interval:<minutes> (1-10080)`
		if err == nil || err.Error() != want {
			t.Errorf("Start with a bad spec = %v, want %s", err, want)
		}
		if err := NewNightly(nil, ai.NightlyConfig{Spec: "nightly"}, NightlyDeps{}).Start(); err != nil {
			t.Errorf("Start disabled = %v, want nil (a disabled block is not validated at start)", err)
		}
		// A running loop: interval:1 with the clock moved past a slot.
		clk := &clock{t: time.Date(2026, 11, 28, 6, 0, 30, 0, time.UTC)}
		n := NewNightly(nil, ai.NightlyConfig{Enabled: true, Spec: "interval:1"}, NightlyDeps{DB: db, Analyst: an, Now: clk.Now, Tick: 10 * time.Millisecond})
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = n.Stop() }()
		deadline := time.Now().Add(10 * time.Second)
		for {
			if _, err := db.GetSetting(t.Context(), SlotKey); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no slot recorded after 10 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		clk.Add(time.Minute)
		for len(an.Calls()) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		_ = n.Stop()
		if got := len(an.Calls()); got != 1 {
			t.Errorf("the loop made %d calls, want 1", got)
		}
		if c := an.Calls(); len(c) == 1 && !strings.Contains(c[0].task, "Summarise the last minute on") {
			t.Errorf("interval:1 task %q", c[0].task)
		}
	})
}
