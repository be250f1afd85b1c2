package anomaly

import (
	"math"
	"testing"
	"time"
)

// weeklyHistory seeds Tuesdays 09:00-09:59 of `weeks` weeks before now
// (10 and 14 Mbit/s alternating) and every other day's 09:00 hour at 40
// and 44 Mbit/s, so the daily and weekly bands differ.
func weeklyHistory(now time.Time, weeks int) []Point {
	var pts []Point
	hour := time.Date(now.Year(), now.Month(), now.Day(), 9, 0, 0, 0, time.UTC)
	for d := 1; d <= weeks*7; d++ {
		day := hour.AddDate(0, 0, -d)
		lo, hi := 40e6, 44e6
		if day.Weekday() == time.Tuesday {
			lo, hi = 10e6, 14e6
		}
		for m := range 60 {
			v := lo
			if m%2 == 1 {
				v = hi
			}
			pts = append(pts, Point{TS: day.Add(time.Duration(m) * time.Minute).Unix(), V: v})
		}
	}
	return pts
}

// TestWeeklyBand: with 4 weeks of Tuesdays the window is judged against
// Tuesdays 09:00 with the exact mean, sd and z, and the message says so;
// the aggregates combine to what the minutes give.
func TestWeeklyBand(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC) // a Tuesday
	pts := weeklyHistory(now, 4)
	aggs := Aggregate(pts)
	if len(aggs) != 28 || aggs[0].N != 60 || aggs[0].Sum != 30*40e6+30*44e6 {
		t.Fatalf("aggregates (the first is the Monday before): %d, first %+v", len(aggs), aggs[0])
	}
	w := BuildWeekly(aggs)
	tue := w.Band(now)
	sd := 2e6 * math.Sqrt(240.0/239)
	if tue.Weekday != time.Tuesday || tue.Hour != 9 || tue.N != 240 || tue.Weeks != 4 || tue.Mean != 12e6 || math.Abs(tue.SD-sd) > 1e-6 {
		t.Fatalf("Tuesday 09:00 band %+v (sd want %v)", tue, sd)
	}
	if mon := w.Band(now.AddDate(0, 0, -1)); mon.N != 240 || mon.Mean != 42e6 || mon.Weekday != time.Monday {
		t.Fatalf("Monday 09:00 band %+v", mon)
	}
	daily := Build(pts)
	cfg := Config{Sensitivity: 3, MinSamples: 120, WindowMin: 5}
	d, ok := JudgeSeasonal(&daily, w, []Point{{V: 30e6}, {V: 40e6}}, now, "in", cfg)
	if !ok || !d.Weekly || !d.Deviates || d.Value != 35e6 || math.Abs(d.Z-23e6/sd) > 1e-9 {
		t.Fatalf("judged %+v, %v", d, ok)
	}
	if got, want := d.Message(), "in 35.0 Mbit/s, z = 11.5 against Tuesdays 09:00 UTC over 4 weeks (mean 12.0, sd 2.0, 240 samples)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	// Against the daily band (mean of 4 Tuesdays and 24 other days) the
	// same 35 Mbit/s would be ordinary: the weekly band is what sees it.
	if dd, _ := Judge(&daily, []Point{{V: 30e6}, {V: 40e6}}, now, "in", cfg); dd.Deviates {
		t.Errorf("daily band judged it deviating: %+v", dd)
	}
}

// TestWeeklyFallback: with 3 weeks of history the hour-of-week band is
// not used; the daily band judges and the message says "over 7 days".
func TestWeeklyFallback(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)
	pts := weeklyHistory(now, 3)
	w := BuildWeekly(Aggregate(pts))
	if b := w.Band(now); b.Weeks != 3 || b.N != 180 {
		t.Fatalf("band %+v", b)
	}
	var week []Point
	for _, p := range pts {
		if p.TS >= now.AddDate(0, 0, -7).Unix() {
			week = append(week, p)
		}
	}
	daily := Build(week)
	// The 7 days hold 6 other days' 09:00 hours (360 minutes at 40/44)
	// and the last Tuesday's 09:30-09:59 (30 minutes at 10/14).
	n := 390.0
	mean := (180*40e6 + 180*44e6 + 15*10e6 + 15*14e6) / n
	sq := 180*40e6*40e6 + 180*44e6*44e6 + 15*10e6*10e6 + 15*14e6*14e6
	sd := math.Sqrt((sq - n*mean*mean) / (n - 1))
	cfg := Config{Sensitivity: 3, MinSamples: 120, WindowMin: 5}
	d, ok := JudgeSeasonal(&daily, w, []Point{{V: 80e6}}, now, "out", cfg)
	if !ok || d.Weekly || d.Band.N != 390 || math.Abs(d.Band.Mean-mean) > 1e-6 || math.Abs(d.Band.SD-sd) > 1e-6 || math.Abs(d.Z-(80e6-mean)/sd) > 1e-9 {
		t.Fatalf("judged %+v, %v (mean %v sd %v)", d, ok, mean, sd)
	}
	if got, want := d.Message(), "out 80.0 Mbit/s, z = 4.9 against 09:00 UTC over 7 days (mean 39.7, sd 8.3, 390 samples)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// TestQueriesMessage: a DNS series counts queries per minute.
func TestQueriesMessage(t *testing.T) {
	d := Deviation{Metric: "dns:evil.test", Value: 120, Z: 7.25, Unit: UnitQueries, Band: Band{Hour: 3, Mean: 4, SD: 16, N: 420}}
	if got, want := d.Message(), "dns:evil.test 120.0 queries/min, z = 7.2 against 03:00 UTC over 7 days (mean 4.0, sd 16.0, 420 samples)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
