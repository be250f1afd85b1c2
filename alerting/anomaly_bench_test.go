package alerting_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"netmon/alerting"
	"netmon/alerting/anomaly"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// benchRates is 1 000 agents, each with interface in/out, 10 processes
// and 10 domains. Every series shares one history (the current hour of
// the 7 previous days, alternating values) and one 5-minute window
// inside the band, so nothing fires and the cycle measured is the
// steady state: the bands cached, the windows read and judged.
type benchRates struct {
	series        []alerting.SeriesRef
	hist, win     []anomaly.Point
	procs, domain []string
	deepHist      map[string][]anomaly.Point
	deepWin       map[string][]anomaly.Point
	// histBefore tells a history read (from 7 days back) from a window's.
	histBefore int64
}

func newBenchRates(agents int, now time.Time) *benchRates {
	r := &benchRates{deepHist: map[string][]anomaly.Point{}, deepWin: map[string][]anomaly.Point{}, histBefore: now.Add(-24 * time.Hour).Unix()}
	for i := 1; i <= agents; i++ {
		r.series = append(r.series, alerting.SeriesRef{AgentID: int64(i), Site: "s"})
	}
	hour := now.Truncate(time.Hour)
	for d := 1; d <= 7; d++ {
		for m := range 60 {
			r.hist = append(r.hist, anomaly.Point{TS: hour.Add(-time.Duration(d)*24*time.Hour + time.Duration(m)*time.Minute).Unix(), V: float64(10 + 4*(m%2))})
		}
	}
	for k := range 5 {
		r.win = append(r.win, anomaly.Point{TS: now.Unix() - int64(k)*60, V: 12})
	}
	for i := range alerting.DeepTopN {
		r.procs = append(r.procs, "proc"+strconv.Itoa(i))
		r.domain = append(r.domain, "d"+strconv.Itoa(i)+".test")
	}
	for _, n := range r.procs {
		r.deepHist["proc:"+n], r.deepWin["proc:"+n] = r.hist, r.win
	}
	for _, n := range r.domain {
		r.deepHist["dns:"+n], r.deepWin["dns:"+n] = r.hist, r.win
	}
	return r
}

func (r *benchRates) RateSeries(context.Context) ([]alerting.SeriesRef, error) { return r.series, nil }

func (r *benchRates) RateMinutes(_ context.Context, _, from, _ int64) (in, out []anomaly.Point, err error) {
	if from < r.histBefore {
		return r.hist, r.hist, nil
	}
	return r.win, r.win, nil
}

func (r *benchRates) DeepTop(context.Context, int64, int64, int64, int) ([]string, []string, error) {
	return r.procs, r.domain, nil
}

func (r *benchRates) DeepMinutes(_ context.Context, _, from, _ int64, _, _ []string) (map[string][]anomaly.Point, error) {
	if from < r.histBefore {
		return r.deepHist, nil
	}
	return r.deepWin, nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEvalAnomaly: one anomaly cycle over 1 000 agents × (2
// interface + 10 process + 10 domain series) = 22 000 series, the
// baselines built (the first cycle of an hour) outside the timer;
// cpu-ms/cycle is the process's CPU (user+sys) per cycle.
func BenchmarkEvalAnomaly(b *testing.B) {
	c := newClock()
	c.advance(30 * time.Minute)
	rates := newBenchRates(1000, c.t)
	s := alerting.DefaultSettings()
	s.Enabled, s.Anomaly.Enabled = true, true
	cfg := alerting.DefaultConfig()
	cfg.Enabled = false
	e := alerting.New(quiet(), cfg, alerting.Deps{Rates: rates, Now: c.now,
		Settings: func(context.Context) (alerting.Settings, error) { return s, nil }}, nil)
	if err := e.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = e.Stop() }()
	ctx := context.Background()
	e.EvalAnomaly(ctx) // builds the 22 000 bands
	if a := e.ActiveAnomalies(); len(a) != 0 {
		b.Fatalf("a quiet fleet deviates: %d", len(a))
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		e.EvalAnomaly(ctx)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/cycle")
}

// topRates is one agent whose top process list the test sets; every
// process has the benchmark's quiet history, the window at `level`.
type topRates struct {
	*benchRates
	top   []string
	level float64
}

func (r *topRates) DeepTop(context.Context, int64, int64, int64, int) ([]string, []string, error) {
	return r.top, nil, nil
}

func (r *topRates) DeepMinutes(_ context.Context, _, from, _ int64, procs, _ []string) (map[string][]anomaly.Point, error) {
	out := map[string][]anomaly.Point{}
	for _, p := range procs {
		if from < r.histBefore {
			out["proc:"+p] = r.hist
		} else {
			out["proc:"+p] = []anomaly.Point{{TS: from, V: r.level}}
		}
	}
	return out, nil
}

// TestAnomalyTopListResolve: proc:x deviates and fires; the next hour x
// is no longer among the agent's top processes, so it is not judged, and
// its open anomaly resolves (the agent was read whole), while the
// interface keys, never firing, stay untouched.
func TestAnomalyTopListResolve(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		c := newClock()
		c.advance(30 * time.Minute)
		r := &topRates{benchRates: newBenchRates(1, c.t), top: []string{"x"}, level: 100}
		s := alerting.DefaultSettings()
		s.Enabled, s.Anomaly.Enabled = true, true
		e := newEngine(t, db, c, s, alerting.Deps{Rates: r})
		ctx := context.Background()
		e.EvalAnomaly(ctx)
		if evs := events(t, db); len(evs) != 1 || evs[0].Key != "1|proc:x" || evs[0].State != record.AlertFiring {
			t.Fatalf("spike: %+v", evs)
		}
		r.top, r.level = []string{"y"}, 12 // y is quiet
		c.advance(time.Hour)
		r.benchRates = newBenchRates(1, c.t)
		e.EvalAnomaly(ctx)
		if evs := events(t, db); len(evs) != 1 || evs[0].State != "resolved" || evs[0].ResolvedTS != c.t.Unix() {
			t.Fatalf("after x left the top list: %+v", evs)
		}
	})
}
