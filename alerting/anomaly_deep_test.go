package alerting_test

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"netmon/alerting"
	"netmon/alerting/anomaly"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// storeRates is the engine's anomaly input read from the real store, as
// app/hub wires it: one agent, its interface, hourly and deep series.
type storeRates struct {
	db    *store.DB
	agent int64
}

func (s storeRates) RateSeries(context.Context) ([]alerting.SeriesRef, error) {
	return []alerting.SeriesRef{{AgentID: s.agent, Site: "north"}}, nil
}

func (s storeRates) RateMinutes(ctx context.Context, agentID, from, to int64) (in, out []anomaly.Point, err error) {
	ms, err := s.db.RateMinutes(ctx, agentID, from, to)
	for _, m := range ms {
		in, out = append(in, anomaly.Point{TS: m.TS, V: m.InBps}), append(out, anomaly.Point{TS: m.TS, V: m.OutBps})
	}
	return in, out, err
}

func (s storeRates) DeepTop(ctx context.Context, agentID, from, to int64, n int) ([]string, []string, error) {
	return s.db.DeepTop(ctx, agentID, from, to, n)
}

func (s storeRates) DeepMinutes(ctx context.Context, agentID, from, to int64, procs, domains []string) (map[string][]anomaly.Point, error) {
	ms, err := s.db.DeepMinutes(ctx, agentID, from, to, procs, domains)
	out := make(map[string][]anomaly.Point, len(ms))
	for k, l := range ms {
		for _, m := range l {
			out[k] = append(out[k], anomaly.Point{TS: m.TS, V: m.V})
		}
	}
	return out, err
}

// TestAnomalyDeepSpike: a seeded 7-day history of deep minutes (curl at
// 10 and 14 Mbit/s, a.test at 4 and 6 queries a minute, every 08:00 hour)
// and a live spike of both in the last window fire anomaly
// <agent>|proc:curl and <agent>|dns:a.test with the exact messages, on
// both databases; the quiet process stays silent.
func TestAnomalyDeepSpike(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c := newClock() // 2027-01-15 08:00:00 UTC
		var agent int64
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			agent, _, err = tx.CreateAgent(ctx, store.Agent{Name: "a", Site: "north", TokenHash: "h-a", EnrolledAt: 1})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var batches []record.Deep
		add := func(ts int64, curlBytes, queries uint64) {
			batches = append(batches, record.Deep{AgentID: agent, Seq: uint64(len(batches) + 1), TS: ts,
				Processes: []record.ProcessBytes{{Process: "curl", PID: 1, BytesIn: curlBytes}, {Process: "sshd", PID: 2, BytesOut: 75e6}},
				DNS:       []record.DNSCount{{Domain: "a.test", Process: "curl", Queries: queries}}})
		}
		for d := 1; d <= 7; d++ {
			hour := c.t.Add(-time.Duration(d) * 24 * time.Hour).Unix()
			for m := range int64(60) {
				if m%2 == 0 {
					add(hour+m*60, 75e6, 4) // 10 Mbit/s
				} else {
					add(hour+m*60, 105e6, 6) // 14 Mbit/s
				}
			}
		}
		for ts := c.t.Unix() - 300; ts <= c.t.Unix(); ts += 60 {
			add(ts, 750e6, 120) // 100 Mbit/s, 120 queries a minute
		}
		if _, err := db.WriteDeep(ctx, batches); err != nil {
			t.Fatal(err)
		}
		s := alerting.DefaultSettings()
		s.Enabled, s.Anomaly.Enabled, s.Anomaly.CritZ = true, true, 0
		e := newEngine(t, db, c, s, alerting.Deps{Rates: storeRates{db, agent}})
		e.EvalAnomaly(ctx)
		evs := events(t, db)
		sd := 2e6 * math.Sqrt(420.0/419)
		if z := 88e6 / sd; math.Abs(z-43.947) > 1e-3 {
			t.Fatalf("z %v", z)
		}
		pfx := "agent " + strconv.FormatInt(agent, 10) + ": "
		want := map[string]string{
			strconv.FormatInt(agent, 10) + "|proc:curl":  pfx + "proc:curl 100.0 Mbit/s, z = 43.9 against 08:00 UTC over 7 days (mean 12.0, sd 2.0, 420 samples)",
			strconv.FormatInt(agent, 10) + "|dns:a.test": pfx + "dns:a.test 120.0 queries/min, z = 114.9 against 08:00 UTC over 7 days (mean 5.0, sd 1.0, 420 samples)",
		}
		if len(evs) != 2 {
			t.Fatalf("events: %+v", evs)
		}
		for _, ev := range evs {
			if want[ev.Key] != ev.Message || ev.Kind != alerting.KindAnomaly || ev.Severity != alerting.SeverityAnomaly || ev.AgentID != agent {
				t.Errorf("event %q: %+v, want message %q", ev.Key, ev, want[ev.Key])
			}
		}
		act := e.ActiveAnomalies()
		if len(act) != 2 || act[0].Metric != "proc:curl" || act[0].Unit != "bit/s" || act[0].Samples != 420 || act[0].Mean != 12e6 ||
			act[1].Metric != "dns:a.test" || act[1].Unit != "queries/min" || act[1].Value != 120 || act[1].Weekly {
			t.Errorf("active: %+v", act)
		}
	})
}

func (s storeRates) RateHours(ctx context.Context, agentID, from, to int64) (in, out []anomaly.HourAgg, err error) {
	hs, err := s.db.RateHours(ctx, agentID, from, to)
	for _, h := range hs {
		in = append(in, anomaly.HourAgg{TS: h.TS, N: h.N, Sum: h.InSum, SumSq: h.InSq})
		out = append(out, anomaly.HourAgg{TS: h.TS, N: h.N, Sum: h.OutSum, SumSq: h.OutSq})
	}
	return in, out, err
}

// TestAnomalyWeekly: the hub capture's minutes seeded over 4 weeks
// (Fridays 08:00 at 10/14 Mbit/s, the other days' 08:00 at 40/44) judge
// a 35 Mbit/s window against Fridays 08:00 with the exact message; with 3
// weeks the hour-of-day band (mean 37.7 Mbit/s) judges an 80 Mbit/s
// window, the message saying so. Both databases.
func TestAnomalyWeekly(t *testing.T) {
	for _, weeks := range []int{4, 3} {
		storetest.Each(t, func(t *testing.T, db *store.DB) {
			ctx := context.Background()
			c := newClock() // Friday 2027-01-15 08:00:00 UTC
			if wd := c.t.UTC().Weekday(); wd != time.Friday {
				t.Fatalf("clock on %s", wd)
			}
			minute := func(ts, bits int64) {
				if err := db.AddTrafficMinute(ctx, store.TrafficMinute{TS: ts, InBytes: bits * 60 / 8, Seconds: 60}); err != nil {
					t.Fatal(err)
				}
			}
			for d := 1; d <= weeks*7; d++ {
				hour := c.t.Add(-time.Duration(d) * 24 * time.Hour).Unix()
				lo := int64(40e6)
				if d%7 == 0 {
					lo = 10e6
				}
				for m := range int64(60) {
					minute(hour+m*60, lo+m%2*4e6)
				}
			}
			level := int64(35e6)
			if weeks == 3 {
				level = 80e6
			}
			for ts := c.t.Unix() - 300; ts <= c.t.Unix(); ts += 60 {
				minute(ts, level)
			}
			s := alerting.DefaultSettings()
			s.Enabled, s.Anomaly.Enabled, s.Anomaly.CritZ = true, true, 0
			e := newEngine(t, db, c, s, alerting.Deps{Rates: storeRates{db, 0}})
			e.EvalAnomaly(ctx)
			evs := events(t, db)
			if weeks == 3 {
				// The hour-of-day band of the 7 days: 360 minutes at 40/44
				// and the last Friday's 60 at 10/14 Mbit/s.
				n := 420.0
				mean := (180*40e6 + 180*44e6 + 30*10e6 + 30*14e6) / n
				sd := math.Sqrt((180*40e6*40e6 + 180*44e6*44e6 + 30*10e6*10e6 + 30*14e6*14e6 - n*mean*mean) / (n - 1))
				want := fmt.Sprintf("hub capture: in 80.0 Mbit/s, z = %.1f against 08:00 UTC over 7 days (mean %.1f, sd %.1f, 420 samples)", (80e6-mean)/sd, mean/1e6, sd/1e6)
				if want != "hub capture: in 80.0 Mbit/s, z = 4.0 against 08:00 UTC over 7 days (mean 37.7, sd 10.7, 420 samples)" {
					t.Fatalf("expected message %q", want)
				}
				if len(evs) != 1 || evs[0].Message != want {
					t.Fatalf("3 weeks: %+v, want %q", evs, want)
				}
				return
			}
			want := "hub capture: in 35.0 Mbit/s, z = 11.5 against Fridays 08:00 UTC over 4 weeks (mean 12.0, sd 2.0, 240 samples)"
			if len(evs) != 1 || evs[0].Key != "0|in" || evs[0].Message != want {
				t.Fatalf("events %+v, want one 0|in %q", evs, want)
			}
			act := e.ActiveAnomalies()
			if len(act) != 1 || !act[0].Weekly || act[0].Weekday != 5 || act[0].Samples != 240 || act[0].Mean != 12e6 ||
				math.Abs(act[0].Z-23e6/(2e6*math.Sqrt(240.0/239))) > 1e-9 {
				t.Fatalf("active %+v", act)
			}
		})
	}
}
