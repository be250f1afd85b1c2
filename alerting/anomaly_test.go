package alerting_test

import (
	"context"
	"testing"
	"time"

	"netmon/alerting"
	"netmon/alerting/anomaly"
	"netmon/store"
	"netmon/store/storetest"
)

// fakeRates is a history in memory: one agent of site s1, a constant
// out series and an in series of the test's choosing.
type fakeRates struct {
	in func(ts int64) float64
}

func (fakeRates) RateSeries(context.Context) ([]alerting.SeriesRef, error) {
	return []alerting.SeriesRef{{AgentID: 7, Site: "s1"}}, nil
}

func (f fakeRates) RateMinutes(_ context.Context, _ int64, from, to int64) (in, out []anomaly.Point, err error) {
	for ts := from - from%60 + 60; ts < to; ts += 60 {
		in = append(in, anomaly.Point{TS: ts, V: f.in(ts)})
		out = append(out, anomaly.Point{TS: ts, V: 1e6})
	}
	return in, out, nil
}

// TestAnomalyResolves: a deviation fires (crit above crit_z: severity 9),
// repeats while it lasts, and resolves as soon as a cycle finds the
// window back inside the band (spec 3), without waiting for
// auto_resolve_min.
func TestAnomalyResolves(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock()
		spikeFrom := c.t.Add(-5 * time.Minute).Unix()
		spike := true
		rates := fakeRates{in: func(ts int64) float64 {
			if spike && ts >= spikeFrom {
				return 100e6
			}
			if (ts/60)%2 == 0 {
				return 10e6
			}
			return 14e6
		}}
		s := alerting.DefaultSettings()
		s.Enabled, s.Anomaly.Enabled, s.Anomaly.CritZ = true, true, 10
		e := newEngine(t, db, c, s, alerting.Deps{Rates: rates})
		ctx := context.Background()
		e.EvalAnomaly(ctx)
		evs := events(t, db)
		if len(evs) != 1 || evs[0].Key != "7|in" || evs[0].Severity != 9 || evs[0].Site != "s1" || evs[0].AgentID != 7 {
			t.Fatalf("spike: %+v", evs)
		}
		c.advance(time.Minute)
		e.EvalAnomaly(ctx)
		if evs := events(t, db); len(evs) != 1 || evs[0].Count != 2 {
			t.Fatalf("repeat: %+v", evs)
		}
		spike = false
		c.advance(time.Minute)
		e.EvalAnomaly(ctx)
		evs = events(t, db)
		if len(evs) != 1 || evs[0].State != "resolved" || evs[0].ResolvedTS != c.t.Unix() {
			t.Fatalf("after the spike: %+v", evs)
		}
		if a := e.ActiveAnomalies(); len(a) != 0 {
			t.Fatalf("active after the spike: %+v", a)
		}
	})
}
