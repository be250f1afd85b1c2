package reports_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/app/reports"
	"netmon/store"
	"netmon/store/storetest"
)

// TestSLATargetValidation: each bad input is a 400 naming its field, and
// nothing is stored (no target, no audit record).
func TestSLATargetValidation(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		n := seedSLA(t, db)
		s := newSLA(db, newClock(), nil)
		ok := reports.SLATargetInput{Name: "office uptime", Metric: "agent_uptime", Site: "ist", Threshold: 99, WindowHours: 24}
		with := func(f func(*reports.SLATargetInput)) reports.SLATargetInput {
			in := ok
			f(&in)
			return in
		}
		tests := []struct {
			desc  string
			in    reports.SLATargetInput
			field string
		}{
			{"empty name", with(func(in *reports.SLATargetInput) { in.Name = "  " }), "name"},
			{"name of 101 characters", with(func(in *reports.SLATargetInput) { in.Name = strings.Repeat("ş", 101) }), "name"},
			{"unknown metric", with(func(in *reports.SLATargetInput) { in.Metric = "latency" }), "metric"},
			{"unknown scope", with(func(in *reports.SLATargetInput) { in.Scope = "tenant" }), "scope"},
			{"agent scope on a device metric", with(func(in *reports.SLATargetInput) {
				in.Metric, in.Scope, in.AgentID = "device_availability", "agent", n.a
			}), "scope"},
			{"device scope on packet_drop", with(func(in *reports.SLATargetInput) {
				in.Metric, in.Scope, in.DeviceID, in.Site = "packet_drop", "device", n.d1, ""
			}), "scope"},
			{"agent scope without agent_id", with(func(in *reports.SLATargetInput) { in.Scope = "agent" }), "agent_id"},
			{"site scope with an agent_id", with(func(in *reports.SLATargetInput) { in.AgentID = n.a }), "agent_id"},
			{"device scope without device_id", with(func(in *reports.SLATargetInput) { in.Metric, in.Scope = "iface_util_p95", "device" }), "device_id"},
			{"agent scope with a device_id", with(func(in *reports.SLATargetInput) { in.Scope, in.AgentID, in.DeviceID = "agent", n.a, n.d1 }), "device_id"},
			{"packet_drop of a site", with(func(in *reports.SLATargetInput) { in.Metric = "packet_drop" }), "site"},
			{"threshold below 0", with(func(in *reports.SLATargetInput) { in.Threshold = -0.01 }), "threshold"},
			{"threshold above 100", with(func(in *reports.SLATargetInput) { in.Threshold = 100.01 }), "threshold"},
			{"threshold NaN", with(func(in *reports.SLATargetInput) { in.Threshold = math.NaN() }), "threshold"},
			{"window 0 h", with(func(in *reports.SLATargetInput) { in.WindowHours = 0 }), "window_hours"},
			{"window 2161 h", with(func(in *reports.SLATargetInput) { in.WindowHours = 2161 }), "window_hours"},
			{"missing agent", with(func(in *reports.SLATargetInput) { in.Scope, in.Site, in.AgentID = "agent", "", 9999 }), "agent_id"},
			// A site-bound caller (site pinned to ist) names ank's agent:
			// the same answer as a missing one.
			{"agent of another site", with(func(in *reports.SLATargetInput) { in.Scope, in.AgentID = "agent", n.c }), "agent_id"},
			{"device of another site", with(func(in *reports.SLATargetInput) { in.Metric, in.Scope, in.DeviceID = "iface_util_p95", "device", n.d2 }), "device_id"},
		}
		for _, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				_, err := s.CreateTarget(ctx, admin, tt.in)
				e, isErr := errs.As(err)
				if !isErr || e.Kind != errs.Invalid || e.Field != tt.field {
					t.Fatalf("CreateTarget: %v (%#v), want a 400 naming %s", err, e, tt.field)
				}
			})
		}
		if got, _ := db.SLATargets(ctx, ""); len(got) != 0 {
			t.Errorf("%d targets stored by refused requests", len(got))
		}
		if got, _ := db.ListAudit(ctx, store.AuditFilter{}); len(got) != 0 {
			t.Errorf("%d audit records of refused requests", len(got))
		}
		// The bounds themselves are accepted.
		for _, in := range []reports.SLATargetInput{
			with(func(in *reports.SLATargetInput) {
				in.Name, in.Threshold, in.WindowHours = strings.Repeat("ş", 100), 0, 1
			}),
			with(func(in *reports.SLATargetInput) { in.Threshold, in.WindowHours = 100, 2160 }),
		} {
			if _, err := s.CreateTarget(ctx, admin, in); err != nil {
				t.Errorf("CreateTarget(%+v): %v", in, err)
			}
		}
	})
}

// TestSLATargetAudit: a create and a delete each write their audit
// record in the change's transaction; a failing audit append leaves
// nothing stored; another site's id is the same 404 as a missing one.
func TestSLATargetAudit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		n := seedSLA(t, db)
		// With app/audit's Builder (what the hub hands in: before and
		// after masked, keys sorted) and without an auditor (plain JSON).
		for _, au := range []struct {
			desc  string
			audit reports.SLAAuditor
			json  func(v any) string
		}{
			{"app/audit builder", audit.Builder{}, audit.Mask},
			{"no auditor", nil, func(v any) string { b, _ := json.Marshal(v); return string(b) }},
		} {
			s := reports.NewSLA(quiet(), reports.DefaultSLAConfig(), reports.SLADeps{Store: db, Now: newClock().now, Audit: au.audit})
			tg := create(t, s, reports.SLATargetInput{Name: "agent b", Metric: "agent_uptime", Scope: "agent", AgentID: n.b, Threshold: 97.5, WindowHours: 24})
			want := reports.SLATarget{ID: tg.ID, Name: "agent b", Metric: "agent_uptime", Scope: "agent", Site: "ist", AgentID: n.b,
				Threshold: 97.5, WindowHours: 24, CreatedAt: slaEnd + 30, CreatedBy: "admin"}
			if diff := cmp.Diff(tg, want); diff != "" {
				t.Errorf("%s: created (-got, +want):\n%s", au.desc, diff)
			}
			// ank's caller cannot delete ist's target: 404, as a missing id.
			for _, tc := range []struct {
				site string
				id   int64
			}{{"ank", tg.ID}, {"", tg.ID + 100}} {
				err := s.DeleteTarget(ctx, admin, tc.site, tc.id)
				if errs.KindOf(err) != errs.NotFound {
					t.Errorf("%s: DeleteTarget(%q, %d) = %v, want not found", au.desc, tc.site, tc.id, err)
				}
			}
			if err := s.DeleteTarget(ctx, admin, "ist", tg.ID); err != nil {
				t.Fatal(err)
			}
			recs, err := db.ListAudit(ctx, store.AuditFilter{Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			type rec struct{ Action, Target, Username, Result, Detail, Before, After string }
			target := "sla/targets/" + jsonNumber(tg.ID)
			wantRecs := []rec{
				{"sla.target.delete", target, "admin", "ok", "agent b", au.json(want), ""},
				{"sla.target.create", target, "admin", "ok", "agent b", "", au.json(want)},
			}
			var gotRecs []rec
			for _, r := range recs {
				gotRecs = append(gotRecs, rec{r.Action, r.Target, r.Username, r.Result, r.Detail, r.BeforeJSON, r.AfterJSON})
			}
			if diff := cmp.Diff(gotRecs, wantRecs); diff != "" {
				t.Errorf("%s: audit records, newest first (-got, +want):\n%s", au.desc, diff)
			}
		}
		if v, err := db.VerifyAudit(ctx); err != nil || !v.OK || v.Checked != 4 {
			t.Errorf("audit chain: %+v, %v; want 4 records verified", v, err)
		}
		s := newSLA(db, newClock(), nil)

		// The audit table gone: the create fails and stores nothing.
		rename := func(from, to string) {
			if _, err := db.Writer().ExecContext(ctx, `ALTER TABLE `+from+` RENAME TO `+to); err != nil {
				t.Fatal(err)
			}
		}
		rename("audit_events", "audit_events_off")
		_, err := s.CreateTarget(ctx, admin, reports.SLATargetInput{Name: "x", Metric: "agent_uptime", Threshold: 99, WindowHours: 24})
		rename("audit_events_off", "audit_events")
		if err == nil {
			t.Fatal("CreateTarget without an audit table succeeded")
		}
		if got, _ := db.SLATargets(ctx, ""); len(got) != 0 {
			t.Errorf("a target stored without its audit record: %+v", got)
		}
	})
}

func jsonNumber(v int64) string { b, _ := json.Marshal(v); return string(b) }

// TestSLAStartStop: the loop evaluates on its own every EvalEvery, and a
// panic in a pass (here in Raise) is recovered and counted, so the next
// pass still runs.
func TestSLAStartStop(t *testing.T) {
	db := storetest.OpenSQLite(t)
	seedSLA(t, db)
	c := newClock()
	raised := make(chan string, 16)
	calls := 0
	raise := func(_ context.Context, kind, key, site, message string, severity int) {
		calls++
		if calls == 1 {
			panic("boom")
		}
		raised <- key
	}
	cfg := reports.DefaultSLAConfig()
	cfg.EvalEvery = 20 * time.Millisecond
	s := reports.NewSLA(quiet(), cfg, reports.SLADeps{Store: db, Now: c.now, Raise: raise})
	tg := create(t, s, reports.SLATargetInput{Name: "capture", Metric: "packet_drop", Threshold: 0.5, WindowHours: 24})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Error("a second Start succeeded")
	}
	select {
	case key := <-raised:
		if key != "sla|"+jsonNumber(tg.ID) {
			t.Errorf("raised %q", key)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no sla_breach raised after the panic")
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
}
