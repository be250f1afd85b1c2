// Package anomaly is the seasonal baseline of spec 6.3 (rule anomaly):
// for a traffic series (an agent's interface traffic in or out, or the
// hub capture's), the minutes of the last 7 days are grouped by hour of
// day (UTC) into a mean and a standard deviation; the average of the last
// window_min minutes is scored against its hour's band as a z-score. A
// band with fewer than min_samples minutes judges nothing.
//
// It is pure: the engine (package alerting) and the API hand it the
// series they read from the store.
package anomaly

import (
	"fmt"
	"math"
	"time"
)

// Point is one minute of a series: TS the minute's start (Unix seconds),
// V the rate in bits per second.
type Point struct {
	TS int64
	V  float64
}

// Band is the baseline of one hour of day.
type Band struct {
	Hour int
	Mean float64
	SD   float64
	N    int
}

// Baseline is the 24 hour-of-day bands of a series.
type Baseline [24]Band

// BaselineDays is the spec's history: 7 days.
const BaselineDays = 7

// Build computes the bands from points (any order); the caller passes
// the minutes of [now-7d, now-window), so the window judged is not part
// of its own baseline.
func Build(points []Point) Baseline {
	var b Baseline
	var sum, sq [24]float64
	for _, p := range points {
		h := time.Unix(p.TS, 0).UTC().Hour()
		b[h].N++
		sum[h] += p.V
		sq[h] += p.V * p.V
	}
	for h := range b {
		b[h].Hour = h
		if n := float64(b[h].N); n > 0 {
			b[h].Mean = sum[h] / n
			if b[h].N > 1 {
				// The sample standard deviation (n-1).
				b[h].SD = math.Sqrt(math.Max(sq[h]-n*b[h].Mean*b[h].Mean, 0) / (n - 1))
			}
		}
	}
	return b
}

// Config is what the operator sets (alert settings, section anomaly).
type Config struct {
	Sensitivity float64 // |z| from which a window deviates (3.0)
	MinSamples  int     // minutes a band needs to judge (120)
	WindowMin   int     // minutes averaged (5)
	CritZ       float64 // |z| from which a deviation is crit (0: never)
}

// Deviation is a window judged against its band.
type Deviation struct {
	Metric string // in or out
	Value  float64
	Z      float64
	Band   Band
	Crit   bool
	// Deviates is true when |z| reaches the sensitivity.
	Deviates bool
	// Unit is the value's unit: "" (bit/s) or UnitQueries (DNS queries
	// per minute).
	Unit string
	// Weekly is true when Band is the hour-of-week band of Weekday, with
	// Weeks weeks of history.
	Weekly  bool
	Weekday time.Weekday
	Weeks   int
}

// UnitQueries is the unit of DNS series: queries per minute.
const UnitQueries = "queries/min"

// Judge averages the points of the window ending at now and scores them
// against the band of now's hour. ok is false when the window is empty or
// the band has too few samples or no spread.
func Judge(b *Baseline, window []Point, now time.Time, metric string, cfg Config) (Deviation, bool) {
	if len(window) == 0 {
		return Deviation{}, false
	}
	band := b[now.UTC().Hour()]
	if band.N < max(cfg.MinSamples, 2) || band.SD == 0 {
		return Deviation{}, false
	}
	var sum float64
	for _, p := range window {
		sum += p.V
	}
	d := Deviation{Metric: metric, Value: sum / float64(len(window)), Band: band}
	d.Z = (d.Value - band.Mean) / band.SD
	d.Deviates = math.Abs(d.Z) >= cfg.Sensitivity
	d.Crit = cfg.CritZ > 0 && math.Abs(d.Z) >= cfg.CritZ
	return d, true
}

// Message explains a deviation: "in 48.2 Mbit/s, z = 4.1 against 09:00
// UTC (mean 11.3, sd 9.0, 28 samples)".
// A weekly band reads "against Tuesdays 09:00 UTC over 4 weeks"; a DNS
// series counts queries per minute instead of Mbit/s.
func (d Deviation) Message() string {
	if d.Unit == UnitQueries {
		return fmt.Sprintf("%s %.1f queries/min, z = %.1f against %s (mean %.1f, sd %.1f, %d samples)",
			d.Metric, d.Value, d.Z, d.against(), d.Band.Mean, d.Band.SD, d.Band.N)
	}
	return fmt.Sprintf("%s %.1f Mbit/s, z = %.1f against %s (mean %.1f, sd %.1f, %d samples)",
		d.Metric, d.Value/1e6, d.Z, d.against(), d.Band.Mean/1e6, d.Band.SD/1e6, d.Band.N)
}

// SeriesRef is a traffic series the anomaly rule judges: an agent's
// interface traffic, or the hub capture's (AgentID 0).
type SeriesRef struct {
	AgentID int64
	Site    string
}
