package reports_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"netmon/alerting"
	"netmon/alerting/rules"
	"netmon/app/reports"
	"netmon/store"
	"netmon/store/storetest"
)

var admin = store.AuditActor{Username: "admin", Role: "admin", ActorType: "user"}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newSLA(db *store.DB, c *clock, raise func(ctx context.Context, kind, key, site, message string, severity int)) *reports.SLA {
	return reports.NewSLA(quiet(), reports.DefaultSLAConfig(), reports.SLADeps{Store: db, Now: c.now, Raise: raise})
}

func create(t *testing.T, s *reports.SLA, in reports.SLATargetInput) reports.SLATarget {
	t.Helper()
	tg, err := s.CreateTarget(context.Background(), admin, in)
	if err != nil {
		t.Fatalf("create %q: %v", in.Name, err)
	}
	return tg
}

// slaTargets creates the targets of the measurement and breach tests and
// returns them with what each measures on seedSLA's data (see there).
func slaTargets(t *testing.T, s *reports.SLA, n slaNet) []reports.TargetStatus {
	t.Helper()
	rows := []struct {
		in       reports.SLATargetInput
		measured float64
		met      bool
		noData   bool
	}{
		{reports.SLATargetInput{Name: "office uptime", Metric: "agent_uptime", Site: "ist", Threshold: 99, WindowHours: 24}, 96.53, false, false},
		{reports.SLATargetInput{Name: "agent c", Metric: "agent_uptime", Scope: "agent", AgentID: n.c, Threshold: 99, WindowHours: 24}, 100, true, false},
		{reports.SLATargetInput{Name: "agent b", Metric: "agent_uptime", Scope: "agent", AgentID: n.b, Threshold: 97.5, WindowHours: 24}, 97.22, false, false},
		{reports.SLATargetInput{Name: "switch ist", Metric: "device_availability", Scope: "device", DeviceID: n.d1, Threshold: 99, WindowHours: 24}, 97.92, false, false},
		{reports.SLATargetInput{Name: "ank devices", Metric: "device_availability", Scope: "site", Site: "ank", Threshold: 99, WindowHours: 24}, 100, true, false},
		{reports.SLATargetInput{Name: "uplinks ist", Metric: "iface_util_p95", Site: "ist", Threshold: 80, WindowHours: 24}, 100, false, false},
		{reports.SLATargetInput{Name: "ank p95", Metric: "iface_util_p95", Scope: "device", DeviceID: n.d2, Threshold: 80, WindowHours: 24}, 50, true, false},
		{reports.SLATargetInput{Name: "capture", Metric: "packet_drop", Threshold: 0.5, WindowHours: 24}, 1, false, false},
		{reports.SLATargetInput{Name: "empty site", Metric: "agent_uptime", Site: "nowhere", Threshold: 99, WindowHours: 24}, 0, true, true},
		// The last hour: a reported none of minutes 1380..1439, the
		// capture read nothing in it: 0.00 % and no data.
		{reports.SLATargetInput{Name: "a last hour", Metric: "agent_uptime", Scope: "agent", AgentID: n.a, Threshold: 50, WindowHours: 1}, 0, false, false},
		{reports.SLATargetInput{Name: "capture last hour", Metric: "packet_drop", Threshold: 0.5, WindowHours: 1}, 0, true, true},
	}
	var out []reports.TargetStatus
	for _, r := range rows {
		tg := create(t, s, r.in)
		out = append(out, reports.TargetStatus{Target: tg, Measured: r.measured, Met: r.met, NoData: r.noData, Evaluated: slaEnd + 30})
	}
	return out
}

// TestSLAMeasurements: every metric measured on seeded data, site
// narrowing of the list, and the report's figures, on both databases.
func TestSLAMeasurements(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		n := seedSLA(t, db)
		c := newClock()
		s := newSLA(db, c, nil)
		all := slaTargets(t, s, n)
		ist := []reports.TargetStatus{all[0], all[2], all[3], all[5], all[9]}
		for _, tt := range []struct {
			site string
			want []reports.TargetStatus
		}{{"", all}, {"ist", ist}, {"ank", []reports.TargetStatus{all[1], all[4], all[6]}}, {"izmir", []reports.TargetStatus{}}} {
			t.Run("list site "+tt.site, func(t *testing.T) {
				got, err := s.ListTargets(ctx, tt.site)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("ListTargets(%q) (-got, +want):\n%s", tt.site, diff)
				}
			})
		}
		// The report's figures over the same 24 h (see seedSLA); its
		// targets are measured over their own windows ending at to.
		to := time.Unix(slaEnd, 0)
		for _, tt := range []struct {
			site string
			want reports.SLAFigures
		}{
			{"", reports.SLAFigures{AgentUptimePct: 97.69, Agents: 3, DeviceAvailabilityPct: 98.96, Devices: 2, PacketDropPct: 1, HasPacketDrop: true, Targets: all}},
			{"ist", reports.SLAFigures{AgentUptimePct: 96.53, Agents: 2, DeviceAvailabilityPct: 97.92, Devices: 1, Targets: ist}},
			{"izmir", reports.SLAFigures{Targets: []reports.TargetStatus{}}},
		} {
			t.Run("figures site "+tt.site, func(t *testing.T) {
				got, err := s.Figures(ctx, tt.site, to.Add(-24*time.Hour), to)
				if err != nil {
					t.Fatal(err)
				}
				for i := range tt.want.Targets {
					tt.want.Targets[i].Evaluated = slaEnd
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("Figures(%q) (-got, +want):\n%s", tt.site, diff)
				}
			})
		}
	})
}

// TestSLABreachOnce: violated targets raise sla_breach through a real
// alert engine on a real store: one event per target, its repeats
// counted, no second event within the cooldown; met targets and targets
// without data never fire; a hub that is not the leader raises nothing.
func TestSLABreachOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		n := seedSLA(t, db)
		c := newClock()
		settings := alerting.DefaultSettings() // cooldown 10 min
		settings.AutoResolveMin = 2
		cfg := alerting.DefaultConfig()
		cfg.Enabled = false // the test drives the evaluations
		engine := alerting.New(quiet(), cfg, alerting.Deps{Store: db, Now: c.now,
			Settings: func(context.Context) (alerting.Settings, error) { return settings, nil }}, nil)
		if err := engine.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = engine.Stop() })
		raise := func(ctx context.Context, kind, key, site, message string, severity int) {
			engine.Raise(ctx, rules.Alert{Kind: kind, Key: key, Site: site, Message: message, Severity: severity})
		}
		leader := false
		s := reports.NewSLA(quiet(), reports.DefaultSLAConfig(), reports.SLADeps{Store: db, Now: c.now, Raise: raise,
			IsLeader: func() bool { return leader }})
		tg := slaTargets(t, s, n)
		key := func(i int) string { return fmt.Sprintf("sla|%d", tg[i].Target.ID) }

		s.Evaluate(ctx) // not the leader: nothing
		if got := slaEvents(t, db); len(got) != 0 {
			t.Fatalf("a follower raised %d events: %+v", len(got), got)
		}
		leader = true
		// Five passes a minute apart: one event per violated target,
		// count 5, with the first pass's message.
		for range 5 {
			s.Evaluate(ctx)
			c.advance(time.Minute)
		}
		firing := func(count int64) []recordEvent {
			return []recordEvent{
				{key(0), "ist", `SLA "office uptime": agent uptime 96.53 % < 99.00 % over 24 h (site ist)`, "firing", count, 6},
				{key(2), "ist", fmt.Sprintf(`SLA "agent b": agent uptime 97.22 %% < 97.50 %% over 24 h (agent %d, site ist)`, n.b), "firing", count, 6},
				{key(3), "ist", fmt.Sprintf(`SLA "switch ist": device availability 97.92 %% < 99.00 %% over 24 h (device %d, site ist)`, n.d1), "firing", count, 6},
				{key(5), "ist", fmt.Sprintf(`SLA "uplinks ist": interface utilisation p95 100.00 %% > 80.00 %% over 24 h (site ist; busiest: device %d ifIndex 2)`, n.d1), "firing", count, 6},
				{key(7), "", `SLA "capture": packet drop 1.00 % > 0.50 % over 24 h (all sites)`, "firing", count, 6},
				{key(9), "ist", fmt.Sprintf(`SLA "a last hour": agent uptime 0.00 %% < 50.00 %% over 1 h (agent %d, site ist)`, n.a), "firing", count, 6},
			}
		}
		got := func() []recordEvent { return slaEvents(t, db) }
		byKey := cmpopts.SortSlices(func(a, b recordEvent) bool { return a.Key+a.State < b.Key+b.State })
		if diff := cmp.Diff(got(), firing(5), byKey); diff != "" {
			t.Fatalf("after 5 passes (-got, +want):\n%s", diff)
		}
		// No pass for 2 minutes: auto-resolved. A pass 2 minutes after
		// the resolve, 9 minutes after the events, is inside the
		// 10-minute cooldown: no new event.
		c.advance(2 * time.Minute)
		engine.EvalSnapshot(ctx)
		c.advance(2 * time.Minute)
		s.Evaluate(ctx)
		resolved := firing(5)
		for i := range resolved {
			resolved[i].State = "resolved"
		}
		if diff := cmp.Diff(got(), resolved, byKey); diff != "" {
			t.Fatalf("inside the cooldown (-got, +want):\n%s", diff)
		}
		// A minute later the cooldown is over: each still violated
		// target fires anew (the window moved 10 minutes, so the
		// measured values and the messages differ: compared without).
		c.advance(time.Minute)
		s.Evaluate(ctx)
		again := append(resolved, firing(1)...)
		noMsg := cmpopts.IgnoreFields(recordEvent{}, "Message")
		if diff := cmp.Diff(got(), again, byKey, noMsg); diff != "" {
			t.Errorf("after the cooldown (-got, +want):\n%s", diff)
		}
	})
}

func slaEvents(t *testing.T, db *store.DB) []recordEvent {
	t.Helper()
	evs, err := db.ListAlertEvents(context.Background(), store.AlertFilter{Kind: reports.KindSLABreach})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]recordEvent, 0, len(evs))
	for _, e := range evs {
		out = append(out, recordEvent{Key: e.Key, Site: e.Site, Message: e.Message, State: e.State, Count: e.Count, Severity: e.Severity})
	}
	return out
}

type recordEvent struct {
	Key, Site, Message, State string
	Count                     int64
	Severity                  int
}
