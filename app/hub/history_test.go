package hub

import (
	"context"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/storetest"
)

func TestHistoryAndCompareOverHTTP(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h := startTestHub(t, dsn, nil)
		now := time.Now().Truncate(time.Minute)
		for i, m := range []store.TrafficMinute{
			{TS: now.Add(-3 * time.Minute).Unix(), InBytes: 600, OutBytes: 120, Packets: 60, PeakIn: 20, PeakOut: 4, Seconds: 60},
			{TS: now.Add(-2 * time.Minute).Unix(), InBytes: 1200, OutBytes: 60, Packets: 30, PeakIn: 40, PeakOut: 2, Seconds: 60},
		} {
			if err := h.db.AddTrafficMinute(context.Background(), m); err != nil {
				t.Fatal(i, err)
			}
		}
		c := h.client(t)
		var hist struct {
			RangeMinutes int   `json:"range_minutes"`
			DBBytes      int64 `json:"db_bytes"`
			Totals       struct {
				AvgBpsIn  float64 `json:"avg_bps_in"`
				PeakBpsIn float64 `json:"peak_bps_in"`
				Seconds   int64   `json:"seconds"`
				Samples   int64   `json:"samples"`
			} `json:"totals"`
			Buckets []struct {
				TS  int64   `json:"ts"`
				In  float64 `json:"in"`
				Out float64 `json:"out"`
				PPS float64 `json:"pps"`
			} `json:"buckets"`
		}
		c.call("GET", "/api/history?minutes=10", nil).must(t, 200).decode(t, &hist)
		if hist.RangeMinutes != 10 || hist.DBBytes <= 0 || len(hist.Buckets) != 2 || hist.Buckets[0].In != 10 || hist.Buckets[1].In != 20 ||
			hist.Buckets[0].PPS != 1 || hist.Totals.Samples != 2 || hist.Totals.Seconds != 120 || hist.Totals.AvgBpsIn != 1800*8/120.0 || hist.Totals.PeakBpsIn != 320 {
			t.Errorf("history %+v", hist)
		}
		var def struct {
			RangeMinutes int `json:"range_minutes"`
		}
		c.call("GET", "/api/history", nil).must(t, 200).decode(t, &def)
		if def.RangeMinutes != 60 {
			t.Errorf("default minutes %d", def.RangeMinutes)
		}
		for url, msg := range map[string]string{
			"/api/history?minutes=0":     `{"error":"query parameter \"minutes\": must be an integer between 1 and 10080"}`,
			"/api/history?minutes=10081": `{"error":"query parameter \"minutes\": must be an integer between 1 and 10080"}`,
			"/api/history?minutes=ten":   `{"error":"query parameter \"minutes\": must be an integer between 1 and 10080"}`,
			"/api/compare?days=1":        `{"error":"query parameter \"days\": must be an integer between 2 and 30"}`,
			"/api/compare?days=31":       `{"error":"query parameter \"days\": must be an integer between 2 and 30"}`,
		} {
			if r := c.call("GET", url, nil); r.code != 400 || r.body != msg {
				t.Errorf("%s: %d %s", url, r.code, r.body)
			}
		}
		var cmp struct {
			Days []struct {
				Day     int64 `json:"day"`
				Samples int64 `json:"samples"`
			} `json:"days"`
			Today     []struct{ Hour int } `json:"today_hours"`
			Yesterday []struct{ Hour int } `json:"yesterday_hours"`
		}
		c.call("GET", "/api/compare?days=5", nil).must(t, 200).decode(t, &cmp)
		if len(cmp.Days) != 5 || len(cmp.Today) != 24 || len(cmp.Yesterday) != 24 || cmp.Today[23].Hour != 23 {
			t.Fatalf("compare shape: %d days, %d/%d hours", len(cmp.Days), len(cmp.Today), len(cmp.Yesterday))
		}
		var samples int64
		for _, d := range cmp.Days {
			samples += d.Samples
			if time.Unix(d.Day, 0).Hour() != 0 || time.Unix(d.Day, 0).Minute() != 0 {
				t.Errorf("day %d is not a local midnight", d.Day)
			}
		}
		if samples != 2 {
			t.Errorf("samples %d", samples)
		}
	})
}
