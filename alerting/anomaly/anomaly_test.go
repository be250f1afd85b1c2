package anomaly

import (
	"math"
	"testing"
	"time"
)

// TestBuildAndJudge: bands by UTC hour with the sample standard
// deviation; a window judged against its hour's band with an exact z;
// too few samples or no spread judge nothing.
func TestBuildAndJudge(t *testing.T) {
	base := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var pts []Point
	for d := range 4 {
		for m := range 60 {
			v := 10e6
			if m%2 == 1 {
				v = 14e6
			}
			pts = append(pts, Point{TS: base.Add(time.Duration(d)*24*time.Hour + time.Duration(m)*time.Minute).Unix(), V: v})
		}
		pts = append(pts, Point{TS: base.Add(time.Duration(d)*24*time.Hour + 3*time.Hour).Unix(), V: 5e6}) // 12:00, one sample a day
	}
	b := Build(pts)
	sd := 2e6 * math.Sqrt(240.0/239)
	if b[9].N != 240 || b[9].Mean != 12e6 || math.Abs(b[9].SD-sd) > 1e-6 || b[12].N != 4 || b[12].SD != 0 || b[10].N != 0 {
		t.Fatalf("bands: 9=%+v 12=%+v 10=%+v", b[9], b[12], b[10])
	}
	now := time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC)
	win := []Point{{V: 30e6}, {V: 40e6}}
	cfg := Config{Sensitivity: 3, MinSamples: 120, WindowMin: 5, CritZ: 11}
	d, ok := Judge(&b, win, now, "in", cfg)
	wantZ := 23e6 / sd
	if !ok || !d.Deviates || !d.Crit || math.Abs(d.Z-wantZ) > 1e-9 || d.Value != 35e6 {
		t.Fatalf("judge: %+v, %v (z want %v)", d, ok, wantZ)
	}
	if got, want := d.Message(), "in 35.0 Mbit/s, z = 11.5 against 09:00 UTC over 7 days (mean 12.0, sd 2.0, 240 samples)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if _, ok := Judge(&b, win, now.Add(3*time.Hour), "in", cfg); ok {
		t.Error("a band of 4 samples judged")
	}
	if _, ok := Judge(&b, nil, now, "in", cfg); ok {
		t.Error("an empty window judged")
	}
	d, _ = Judge(&b, []Point{{V: 13e6}}, now, "in", cfg)
	if d.Deviates {
		t.Errorf("a value inside the band deviates: %+v", d)
	}
}
