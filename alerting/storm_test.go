package alerting_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"netmon/alerting"
	"netmon/alerting/rules"
	"netmon/store/storetest"
)

// sample returns the value of the metric name whose labels include all
// of want (name=value pairs), from reg.
func sample(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			return value(m)
		}
	}
	return 0
}

func value(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestCycleCapKeepsOtherSources: a cycle raising more than it may write
// keeps the higher severity and every agent's first alert, and sheds the
// rest of the storm, counted by kind and reason.
func TestCycleCapKeepsOtherSources(t *testing.T) {
	db := storetest.OpenSQLite(t)
	reg := prometheus.NewRegistry()
	cfg := alerting.DefaultConfig()
	cfg.Enabled, cfg.MaxWritesPerCycle = false, 200
	c := newClock()
	e := alerting.New(quiet(), cfg, alerting.Deps{Store: db, Now: c.now}, reg)
	var alerts []rules.Alert
	for i := range 1500 {
		alerts = append(alerts, rules.Alert{Kind: "port", Key: fmt.Sprintf("1|storm-%d", i), Severity: 4, AgentID: 1})
	}
	alerts = append(alerts, rules.Alert{Kind: "port", Key: "2|quiet", Severity: 4, AgentID: 2},
		rules.Alert{Kind: "port", Key: "3|grave", Severity: 9, AgentID: 3})
	e.Raise(context.Background(), alerts...)
	evs := events(t, db)
	if len(evs) != 200 {
		t.Fatalf("%d events stored, want the cap of 200", len(evs))
	}
	by := map[int64]int{}
	for _, ev := range evs {
		by[ev.AgentID]++
	}
	if by[1] != 198 || by[2] != 1 || by[3] != 1 {
		t.Errorf("stored per agent %v, want 198 of agent 1 and one each of agents 2 and 3", by)
	}
	if got := sample(t, reg, "netmon_alerting_shed_total", map[string]string{"kind": "port", "reason": alerting.ShedCap}); got != 1302 {
		t.Errorf("shed %v, want 1302", got)
	}
}

// panicNames panics on its first read, then reports one listed name.
type panicNames struct{ calls atomic.Int32 }

func (p *panicNames) Names(context.Context, time.Time) ([]rules.Name, error) {
	if p.calls.Add(1) == 1 {
		// An index out of range: a real runtime panic.
		_ = []int{}[int(p.calls.Load())]
	}
	return []rules.Name{{AgentID: 4, Name: "x.evil.test", Source: "dns", TS: 60}}, nil
}

type oneEntry struct{}

func (oneEntry) MatchName(n string) (rules.IOCHit, bool) {
	if strings.HasSuffix(n, ".evil.test") {
		return rules.IOCHit{Entry: "evil.test", List: "l", Line: 1}, true
	}
	return rules.IOCHit{}, false
}
func (oneEntry) Generation() int64 { return 1 }

// TestLoopSurvivesPanic: an ioc evaluation that panics is counted and
// logged; the loop's next cycle stores the event (RELIABILITY case 33).
func TestLoopSurvivesPanic(t *testing.T) {
	db := storetest.OpenSQLite(t)
	reg := prometheus.NewRegistry()
	cfg := alerting.DefaultConfig()
	cfg.SnapshotEvery, cfg.InventoryEvery, cfg.AnomalyEvery, cfg.IOCEvery = time.Hour, time.Hour, time.Hour, 10*time.Millisecond
	s := alerting.DefaultSettings()
	s.IOC.Enabled = true
	names := &panicNames{}
	e := alerting.New(quiet(), cfg, alerting.Deps{Store: db, Names: []alerting.NameSource{names}, Threats: oneEntry{},
		Settings: func(context.Context) (alerting.Settings, error) { return s, nil }}, reg)
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	defer e.Stop()
	deadline := time.Now().Add(10 * time.Second)
	for len(events(t, db)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if evs := events(t, db); len(evs) != 1 || evs[0].Key != "4|evil.test" {
		t.Fatalf("after the panic: %+v", evs)
	}
	if got := sample(t, reg, "netmon_alerting_panics_total", map[string]string{"loop": "ioc"}); got != 1 {
		t.Errorf("netmon_alerting_panics_total{loop=ioc} = %v, want 1", got)
	}
}
