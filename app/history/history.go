// Package history answers the minute-resolution history of the hub's own
// capture (spec 2.3) and the day-over-day comparison (spec 2.4) from the
// traffic_minutes rows the capture writes once a minute.
//
// It is an app service: app/api calls it, app/hub hands it the store
// through the small Store interface.
package history

import (
	"context"
	"time"

	"netmon/store"
)

// Store is what history reads; *store.DB implements it.
type Store interface {
	TrafficMinutes(ctx context.Context, from, to int64) ([]store.TrafficMinute, error)
	Size(ctx context.Context) (int64, error)
}

// Result is GET /api/history (spec 2.3).
type Result struct {
	RangeMinutes int      `json:"range_minutes"`
	DBBytes      int64    `json:"db_bytes"`
	Totals       Totals   `json:"totals"`
	Buckets      []Bucket `json:"buckets"`
}

// Totals summarise the range; bps are bits per second.
type Totals struct {
	AvgBpsIn   float64 `json:"avg_bps_in"`
	AvgBpsOut  float64 `json:"avg_bps_out"`
	PeakBpsIn  float64 `json:"peak_bps_in"`
	PeakBpsOut float64 `json:"peak_bps_out"`
	// Seconds of capture in the range, and Samples the minutes with data.
	Seconds int64 `json:"seconds"`
	Samples int64 `json:"samples"`
}

// Bucket is one minute: in/out/local are bytes per second averaged over
// the seconds the capture ran in that minute; pps likewise.
type Bucket struct {
	TS    int64   `json:"ts"`
	In    float64 `json:"in"`
	Out   float64 `json:"out"`
	Local float64 `json:"local"`
	PPS   float64 `json:"pps"`
}

// History returns the last minutes minutes ending at now.
func History(ctx context.Context, s Store, minutes int, now time.Time) (Result, error) {
	to := now.Unix()
	from := now.Add(-time.Duration(minutes) * time.Minute).Truncate(time.Minute).Unix()
	rows, err := s.TrafficMinutes(ctx, from, to+1)
	if err != nil {
		return Result{}, err
	}
	size, err := s.Size(ctx)
	if err != nil {
		return Result{}, err
	}
	res := Result{RangeMinutes: minutes, DBBytes: size, Buckets: make([]Bucket, 0, len(rows))}
	var inSum, outSum int64
	for _, m := range rows {
		secs := float64(max(m.Seconds, 1))
		res.Buckets = append(res.Buckets, Bucket{
			TS: m.TS, In: float64(m.InBytes) / secs, Out: float64(m.OutBytes) / secs,
			Local: float64(m.LocalBytes) / secs, PPS: float64(m.Packets) / secs,
		})
		inSum += m.InBytes
		outSum += m.OutBytes
		res.Totals.Seconds += m.Seconds
		res.Totals.Samples++
		res.Totals.PeakBpsIn = max(res.Totals.PeakBpsIn, float64(m.PeakIn*8))
		res.Totals.PeakBpsOut = max(res.Totals.PeakBpsOut, float64(m.PeakOut*8))
	}
	if res.Totals.Seconds > 0 {
		res.Totals.AvgBpsIn = float64(inSum*8) / float64(res.Totals.Seconds)
		res.Totals.AvgBpsOut = float64(outSum*8) / float64(res.Totals.Seconds)
	}
	return res, nil
}

// Comparison is GET /api/compare (spec 2.4).
type Comparison struct {
	Days           []Day  `json:"days"`
	TodayHours     []Hour `json:"today_hours"`
	YesterdayHours []Hour `json:"yesterday_hours"`
}

// Day summarises one local calendar day; Day is its local midnight.
type Day struct {
	Day        int64   `json:"day"`
	AvgBpsIn   float64 `json:"avg_bps_in"`
	AvgBpsOut  float64 `json:"avg_bps_out"`
	PeakBpsIn  float64 `json:"peak_bps_in"`
	PeakBpsOut float64 `json:"peak_bps_out"`
	Samples    int64   `json:"samples"`
}

// Hour is one local hour's average rate; 0 when the hour has no data.
// TS and Seconds let a client in another zone than the hub place the hour
// on its own clock and tell an idle hour (Seconds > 0, rate 0) from one
// without data (Seconds 0): the hour index alone is the hub's local hour.
type Hour struct {
	Hour     int     `json:"hour"`
	TS       int64   `json:"ts" jsonschema:"description=start of the hour, Unix seconds"`
	BpsIn    float64 `json:"bps_in"`
	BpsOut   float64 `json:"bps_out"`
	Seconds  int64   `json:"seconds" jsonschema:"description=seconds of capture recorded in the hour; 0: no data"`
	bytesIn  int64
	bytesOut int64
}

// Compare returns the last days local days (today included, oldest
// first) and today's and yesterday's 24 hours, in loc.
func Compare(ctx context.Context, s Store, days int, now time.Time, loc *time.Location) (Comparison, error) {
	now = now.In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	first := today.AddDate(0, 0, -(days - 1))
	yesterday := today.AddDate(0, 0, -1)
	start := first
	if yesterday.Before(start) {
		start = yesterday
	}
	rows, err := s.TrafficMinutes(ctx, start.Unix(), now.Unix()+1)
	if err != nil {
		return Comparison{}, err
	}
	type acc struct {
		in, out, secs, samples int64
		peakIn, peakOut        int64
	}
	byDay := map[int64]*acc{}
	var c Comparison
	c.TodayHours, c.YesterdayHours = hours(today), hours(yesterday)
	for _, m := range rows {
		t := time.Unix(m.TS, 0).In(loc)
		midnight := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc).Unix()
		a := byDay[midnight]
		if a == nil {
			a = &acc{}
			byDay[midnight] = a
		}
		a.in += m.InBytes
		a.out += m.OutBytes
		a.secs += m.Seconds
		a.samples++
		a.peakIn = max(a.peakIn, m.PeakIn)
		a.peakOut = max(a.peakOut, m.PeakOut)
		var hs []Hour
		switch midnight {
		case today.Unix():
			hs = c.TodayHours
		case yesterday.Unix():
			hs = c.YesterdayHours
		}
		if hs != nil {
			h := &hs[t.Hour()]
			h.bytesIn += m.InBytes
			h.bytesOut += m.OutBytes
			h.Seconds += m.Seconds
		}
	}
	for _, hs := range [][]Hour{c.TodayHours, c.YesterdayHours} {
		for i := range hs {
			if hs[i].Seconds > 0 {
				hs[i].BpsIn = float64(hs[i].bytesIn*8) / float64(hs[i].Seconds)
				hs[i].BpsOut = float64(hs[i].bytesOut*8) / float64(hs[i].Seconds)
			}
		}
	}
	for d := first; !d.After(today); d = d.AddDate(0, 0, 1) {
		day := Day{Day: d.Unix()}
		if a := byDay[d.Unix()]; a != nil && a.secs > 0 {
			day.AvgBpsIn = float64(a.in*8) / float64(a.secs)
			day.AvgBpsOut = float64(a.out*8) / float64(a.secs)
			day.PeakBpsIn = float64(a.peakIn * 8)
			day.PeakBpsOut = float64(a.peakOut * 8)
			day.Samples = a.samples
		}
		c.Days = append(c.Days, day)
	}
	return c, nil
}

// hours returns the 24 hours of the day starting at midnight. On a day
// with a DST change, hour i is the local hour i (the skipped one starts
// where the next does; the repeated one covers its two runs).
func hours(midnight time.Time) []Hour {
	hs := make([]Hour, 24)
	for i := range hs {
		hs[i].Hour = i
		hs[i].TS = time.Date(midnight.Year(), midnight.Month(), midnight.Day(), i, 0, 0, 0, midnight.Location()).Unix()
	}
	return hs
}
