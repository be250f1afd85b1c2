package history

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/storetest"
)

func TestHistoryAndCompare(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		loc := time.FixedZone("UTC+3", 3*3600)
		now := time.Date(2026, 11, 21, 14, 30, 20, 0, loc)
		min := func(d time.Duration) int64 { return now.Add(-d).Truncate(time.Minute).Unix() }
		rows := []store.TrafficMinute{
			{TS: min(2 * time.Minute), InBytes: 6000, OutBytes: 1200, LocalBytes: 60, Packets: 120, PeakIn: 400, PeakOut: 50, Seconds: 60},
			{TS: min(time.Minute), InBytes: 3000, OutBytes: 300, Packets: 30, PeakIn: 900, PeakOut: 20, Seconds: 30},
			{TS: min(24 * time.Hour), InBytes: 60_000, OutBytes: 6000, Packets: 600, PeakIn: 1000, PeakOut: 100, Seconds: 60},
			{TS: min(48*time.Hour + time.Hour), InBytes: 600, OutBytes: 60, Packets: 6, PeakIn: 10, PeakOut: 1, Seconds: 60},
		}
		for _, r := range rows {
			if err := db.AddTrafficMinute(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		// The same minute again adds up (capture restarted in it).
		if err := db.AddTrafficMinute(ctx, store.TrafficMinute{TS: min(time.Minute), InBytes: 3000, PeakIn: 100, Seconds: 30}); err != nil {
			t.Fatal(err)
		}

		h, err := History(ctx, db, 10, now)
		if err != nil {
			t.Fatal(err)
		}
		want := []Bucket{
			{TS: min(2 * time.Minute), In: 100, Out: 20, Local: 1, PPS: 2},
			{TS: min(time.Minute), In: 100, Out: 5, PPS: 0.5},
		}
		if diff := cmp.Diff(h.Buckets, want); diff != "" {
			t.Errorf("buckets (-got, +want):\n%s", diff)
		}
		wantTotals := Totals{AvgBpsIn: 12000 * 8 / 120.0, AvgBpsOut: 1500 * 8 / 120.0, PeakBpsIn: 900 * 8, PeakBpsOut: 50 * 8, Seconds: 120, Samples: 2}
		if diff := cmp.Diff(h.Totals, wantTotals); diff != "" {
			t.Errorf("totals (-got, +want):\n%s", diff)
		}
		if h.RangeMinutes != 10 || h.DBBytes <= 0 {
			t.Errorf("range %d db_bytes %d", h.RangeMinutes, h.DBBytes)
		}

		c, err := Compare(ctx, db, 3, now, loc)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Days) != 3 || len(c.TodayHours) != 24 || len(c.YesterdayHours) != 24 {
			t.Fatalf("shape: %d days, %d/%d hours", len(c.Days), len(c.TodayHours), len(c.YesterdayHours))
		}
		today := time.Date(2026, 11, 21, 0, 0, 0, 0, loc).Unix()
		if c.Days[2].Day != today || c.Days[0].Day != today-2*86400 {
			t.Errorf("days %d %d, want local midnights", c.Days[0].Day, c.Days[2].Day)
		}
		if c.Days[2].Samples != 2 || c.Days[1].Samples != 1 || c.Days[0].Samples != 1 {
			t.Errorf("samples %+v", c.Days)
		}
		if got := c.TodayHours[14].BpsIn; got != 12000*8/120.0 {
			t.Errorf("today 14h bps_in %v", got)
		}
		if got := c.YesterdayHours[14].BpsIn; got != 60000*8/60.0 {
			t.Errorf("yesterday 14h bps_in %v", got)
		}
		if c.TodayHours[3].BpsIn != 0 || c.TodayHours[3].Hour != 3 || c.TodayHours[3].Seconds != 0 {
			t.Errorf("empty hour %+v", c.TodayHours[3])
		}
		// Each hour carries its start (a client in another zone places it
		// by that) and the seconds of data in it (0: no data).
		if got := c.TodayHours[14]; got.TS != today+14*3600 || got.Seconds != 120 {
			t.Errorf("today 14h ts %d seconds %d, want %d 120", got.TS, got.Seconds, today+14*3600)
		}
		if got := c.YesterdayHours[0]; got.TS != today-86400 || got.Seconds != 0 {
			t.Errorf("yesterday 0h ts %d seconds %d, want %d 0", got.TS, got.Seconds, today-86400)
		}
		if c.Days[0].PeakBpsIn != 80 {
			t.Errorf("day 0 peak %v", c.Days[0].PeakBpsIn)
		}
	})
}
