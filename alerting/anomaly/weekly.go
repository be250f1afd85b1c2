package anomaly

import (
	"fmt"
	"math"
	"time"
)

// Hour-of-week baselines (issue 18, beyond the spec): once a series has 4
// weeks of history, a band per hour of week (Tuesdays 09:00) separates
// what the hour-of-day band blurs (a Monday morning backup, a quiet
// Sunday). The history is read as hourly aggregates (HourAgg: count, sum
// and sum of squares of the hour's minutes), so 4 weeks are 672 rows per
// series instead of 40 320 minutes, and the combined band is exactly the
// sample mean and sd of the minutes it covers.

// WeeklyMinWeeks is how many distinct weeks an hour-of-week band needs
// before it replaces the hour-of-day band.
const WeeklyMinWeeks = 4

// WeeklyDays is the history the weekly bands read: 4 weeks.
const WeeklyDays = 7 * WeeklyMinWeeks

// HourAgg is one hour of a series: TS the hour's start (Unix seconds), N
// the minutes it holds, Sum and SumSq their values' sum and sum of
// squares.
type HourAgg struct {
	TS    int64
	N     int
	Sum   float64
	SumSq float64
}

// WeekBand is the baseline of one hour of week.
type WeekBand struct {
	Band
	Weekday time.Weekday
	// Weeks is the number of distinct weeks contributing.
	Weeks int
}

// WeekBaseline is the 168 hour-of-week bands (index weekday*24 + hour,
// Sunday first, UTC).
type WeekBaseline [168]WeekBand

// Aggregate groups minutes into hourly aggregates (oldest first): what
// the store's SQL computes, for callers that hold minutes.
func Aggregate(points []Point) []HourAgg {
	idx := map[int64]int{}
	var out []HourAgg
	for _, p := range points {
		h := p.TS - p.TS%3600
		i, ok := idx[h]
		if !ok {
			i = len(out)
			idx[h] = i
			out = append(out, HourAgg{TS: h})
		}
		out[i].N++
		out[i].Sum += p.V
		out[i].SumSq += p.V * p.V
	}
	return out
}

// BuildWeekly combines hourly aggregates into hour-of-week bands.
func BuildWeekly(aggs []HourAgg) *WeekBaseline {
	var b WeekBaseline
	var sum, sq [168]float64
	var weeks [168]map[int64]bool
	for _, a := range aggs {
		if a.N <= 0 {
			continue
		}
		t := time.Unix(a.TS, 0).UTC()
		i := int(t.Weekday())*24 + t.Hour()
		b[i].N += a.N
		sum[i] += a.Sum
		sq[i] += a.SumSq
		if weeks[i] == nil {
			weeks[i] = map[int64]bool{}
		}
		weeks[i][a.TS/(7*86400)] = true
	}
	for i := range b {
		b[i].Weekday, b[i].Hour, b[i].Weeks = time.Weekday(i/24), i%24, len(weeks[i])
		if n := float64(b[i].N); n > 0 {
			b[i].Mean = sum[i] / n
			if b[i].N > 1 {
				b[i].SD = math.Sqrt(math.Max(sq[i]-n*b[i].Mean*b[i].Mean, 0) / (n - 1))
			}
		}
	}
	return &b
}

// Band returns the hour-of-week band of t.
func (w *WeekBaseline) Band(t time.Time) WeekBand {
	t = t.UTC()
	return w[int(t.Weekday())*24+t.Hour()]
}

// JudgeSeasonal judges the window against the hour-of-week band of now
// when that band has WeeklyMinWeeks weeks of data and min_samples
// minutes, and against the hour-of-day band otherwise (weekly may be nil).
func JudgeSeasonal(daily *Baseline, weekly *WeekBaseline, window []Point, now time.Time, metric string, cfg Config) (Deviation, bool) {
	if weekly != nil {
		wb := weekly.Band(now)
		if wb.Weeks >= WeeklyMinWeeks {
			var one Baseline
			one[now.UTC().Hour()] = wb.Band
			d, ok := Judge(&one, window, now, metric, cfg)
			if ok {
				d.Weekly, d.Weekday, d.Weeks = true, wb.Weekday, wb.Weeks
				return d, true
			}
		}
	}
	return Judge(daily, window, now, metric, cfg)
}

// against names the band: "Tuesdays 09:00 UTC over 4 weeks" or "09:00
// UTC over 7 days".
func (d Deviation) against() string {
	if d.Weekly {
		return fmt.Sprintf("%ss %02d:00 UTC over %d weeks", d.Weekday, d.Band.Hour, d.Weeks)
	}
	return fmt.Sprintf("%02d:00 UTC over %d days", d.Band.Hour, BaselineDays)
}
