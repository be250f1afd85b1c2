package hub

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestAnomalyRule: a history of the hub capture seeded as minute rows
// (the current hour of each of the 6 previous days; the 7th day's hour is
// partly older than 7 days, so left out: 360 minutes
// alternating 10 and 14 Mbit/s in, a flat 1 Mbit/s out) and a 5-minute
// spike at 50 Mbit/s now: exactly one anomaly (in; out has no spread, so
// it is not judged), with z = 19·sqrt(359/360) in the message, the band
// on the baseline route, the deviation on the active route; a second
// cycle repeats the open event.
func TestAnomalyRule(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) { c.Alerts.Enabled = false })
		ctx := context.Background()
		admin.call("PUT", "/api/alerts", `{"anomaly":{"enabled":true,"sensitivity":3,"min_samples":120,"window_min":5,"crit_z":25}}`).must(t, 200)
		// The band judged is the hour of now (UTC), which the test seeds;
		// a window reaching into the previous hour changes nothing.
		now := time.Now()
		hourStart := now.UTC().Truncate(time.Hour)
		mbit := func(v float64) int64 { return int64(v * 1e6 / 8 * 60) } // bytes in a 60-second minute
		for d := 1; d <= 6; d++ {
			for m := range 60 {
				ts := hourStart.Add(-time.Duration(d) * 24 * time.Hour).Add(time.Duration(m) * time.Minute).Unix()
				in := 10.0
				if m%2 == 1 {
					in = 14
				}
				if err := h.db.AddTrafficMinute(ctx, store.TrafficMinute{TS: ts, InBytes: mbit(in), OutBytes: mbit(1), Seconds: 60}); err != nil {
					t.Fatal(err)
				}
			}
		}
		cur := now.Unix() - now.Unix()%60
		for k := range 5 {
			if err := h.db.AddTrafficMinute(ctx, store.TrafficMinute{TS: cur - int64(k)*60, InBytes: mbit(50), OutBytes: mbit(1), Seconds: 60}); err != nil {
				t.Fatal(err)
			}
		}

		h.alerts.EvalAnomaly(ctx)
		evs, err := h.db.ListAlertEvents(ctx, store.AlertFilter{Kind: "anomaly"})
		if err != nil {
			t.Fatal(err)
		}
		z := 19 * math.Sqrt(359.0/360)
		want := fmt.Sprintf("hub capture: in 50.0 Mbit/s, z = %.1f against %02d:00 UTC over 7 days (mean 12.0, sd 2.0, 360 samples)", z, hourStart.Hour())
		if len(evs) != 1 || evs[0].Key != "0|in" || evs[0].Message != want || evs[0].Severity != 6 || evs[0].Count != 1 {
			t.Fatalf("events: %+v\nwant message %q", evs, want)
		}

		var active []struct {
			AgentID int64   `json:"agent_id"`
			Metric  string  `json:"metric"`
			Z       float64 `json:"z"`
			Mean    float64 `json:"mean_bps"`
			Samples int     `json:"samples"`
			Crit    bool    `json:"crit"`
		}
		admin.call("GET", "/api/v1/anomaly/active", nil).must(t, 200).decode(t, &active)
		if len(active) != 1 || active[0].Metric != "in" || math.Abs(active[0].Z-z) > 1e-9 || active[0].Mean != 12e6 || active[0].Samples != 360 || active[0].Crit {
			t.Fatalf("active: %+v (z want %v)", active, z)
		}

		var base struct {
			Unit  string `json:"unit"`
			Bands []struct {
				Hour    int     `json:"hour_utc"`
				Mean    float64 `json:"mean"`
				SD      float64 `json:"sd"`
				Samples int     `json:"samples"`
				Upper   float64 `json:"upper"`
				Judged  bool    `json:"judged"`
			} `json:"bands"`
			Points []struct {
				TS     int64   `json:"ts"`
				Actual float64 `json:"actual"`
				Upper  float64 `json:"upper"`
			} `json:"points"`
		}
		admin.call("GET", "/api/v1/anomaly/baseline?agent_id=0&metric=in&hours=1", nil).must(t, 200).decode(t, &base)
		band := base.Bands[hourStart.Hour()]
		sd := 2e6 * math.Sqrt(360.0/359)
		if base.Unit != "bit/s" || len(base.Bands) != 24 || band.Samples != 360 || band.Mean != 12e6 || math.Abs(band.SD-sd) > 1e-3 || !band.Judged || math.Abs(band.Upper-(12e6+3*sd)) > 1e-3 {
			t.Fatalf("band: %+v", band)
		}
		if len(base.Points) != 5 || base.Points[4].TS != cur || base.Points[4].Actual != 50e6 {
			t.Fatalf("points: %+v", base.Points)
		}
		admin.call("GET", "/api/v1/anomaly/baseline?agent_id=999", nil).must(t, 404)

		h.alerts.EvalAnomaly(ctx)
		evs, _ = h.db.ListAlertEvents(ctx, store.AlertFilter{Kind: "anomaly"})
		if len(evs) != 1 || evs[0].Count != 2 || evs[0].State != record.AlertFiring {
			t.Fatalf("second cycle: %+v", evs)
		}
	})
}
