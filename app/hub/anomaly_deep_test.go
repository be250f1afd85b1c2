package hub

import (
	"context"
	"fmt"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestAnomalyBaselineDeep: the baseline route serves an agent's process
// (bit/s) and DNS domain (queries/min) series from seeded deep minutes,
// with the hour-of-day band of 7 days; a metric naming no series is 400.
// Both databases.
func TestAnomalyBaselineDeep(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) { c.Alerts.Enabled = false })
		ctx := context.Background()
		a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-deep", MachineID: "m-deep"}))
		cur := time.Now().Unix() / 60 * 60
		var batches []record.Deep
		for k := range int64(3) {
			batches = append(batches, record.Deep{AgentID: a.AgentID, Seq: uint64(100 + k), TS: cur - 600 - k*60,
				Processes: []record.ProcessBytes{{Process: "curl", PID: 1, BytesIn: 7500 * uint64(k+1)}},
				DNS:       []record.DNSCount{{Domain: "a.test", Process: "curl", Queries: uint64(k + 2)}}})
		}
		if _, err := h.db.WriteDeep(ctx, batches); err != nil {
			t.Fatal(err)
		}
		type view struct {
			Metric string `json:"metric"`
			Unit   string `json:"unit"`
			Bands  []struct {
				Samples int `json:"samples"`
			} `json:"bands"`
			Weekly []any `json:"weekly_bands"`
			Points []struct {
				TS     int64   `json:"ts"`
				Actual float64 `json:"actual"`
				Weekly bool    `json:"weekly"`
			} `json:"points"`
		}
		var v view
		admin.call("GET", fmt.Sprintf("/api/v1/anomaly/baseline?agent_id=%d&metric=proc:curl&hours=1", a.AgentID), nil).must(t, 200).decode(t, &v)
		if v.Metric != "proc:curl" || v.Unit != "bit/s" || len(v.Bands) != 24 || v.Weekly == nil || len(v.Weekly) != 0 || len(v.Points) != 3 {
			t.Fatalf("proc view: %+v", v)
		}
		// Oldest first: 22500, 15000, 7500 bytes in a minute.
		for i, want := range []float64{3000, 2000, 1000} {
			if p := v.Points[i]; p.TS != cur-720+int64(i)*60 || p.Actual != want || p.Weekly {
				t.Errorf("proc point %d: %+v, want %v bit/s", i, p, want)
			}
		}
		samples := 0
		for _, b := range v.Bands {
			samples += b.Samples
		}
		if samples != 3 {
			t.Errorf("band samples %d, want 3", samples)
		}
		admin.call("GET", fmt.Sprintf("/api/v1/anomaly/baseline?agent_id=%d&metric=dns:a.test&hours=1", a.AgentID), nil).must(t, 200).decode(t, &v)
		if v.Unit != "queries/min" || len(v.Points) != 3 || v.Points[0].Actual != 4 || v.Points[2].Actual != 2 {
			t.Fatalf("dns view: %+v", v)
		}
		for _, bad := range []string{"agent_id=0&metric=proc:curl", "agent_id=0&metric=sideways", fmt.Sprintf("agent_id=%d&metric=dns:", a.AgentID)} {
			admin.call("GET", "/api/v1/anomaly/baseline?"+bad, nil).must(t, 400)
		}
	})
}

// TestAgentRateHours: an agent's interface minutes (from telemetry
// through the intake) aggregate by hour with the exact count, sums and
// sums of squares, on both databases: the weekly bands' input.
func TestAgentRateHours(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, _ := fleetHub(t, dsn, func(c *config.HubConfig) { c.Alerts.Enabled = false })
		ctx := context.Background()
		a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-hours", MachineID: "m-hours"}))
		// Two minutes at the start of an hour in the past: 16000 and 4000
		// bit/s in, 800 out (as TestAgentRateMinutes).
		hour := time.Now().Unix()/3600*3600 - 3600
		for i, b := range []struct {
			ts     int64
			rx, tx uint64
		}{{hour + 0, 0, 0}, {hour + 10, 10_000, 1_000}, {hour + 20, 40_000, 2_000}, {hour + 70, 65_000, 7_000}} {
			telemetry(t, h, a.AgentToken, wire.Telemetry{TS: b.ts, Seq: uint64(i + 1), Interfaces: []wire.Interface{{Name: "eth0", RxBytes: b.rx, TxBytes: b.tx}}}).must(t, 200)
		}
		eventually(t, "the samples stored", func() bool {
			ms, err := h.db.RateMinutes(ctx, a.AgentID, hour, hour+120)
			return err == nil && len(ms) == 2
		})
		got, err := h.db.RateHours(ctx, a.AgentID, hour-3600, hour+3600)
		if err != nil {
			t.Fatal(err)
		}
		want := store.RateHour{TS: hour, N: 2, InSum: 20000, InSq: 16000*16000 + 4000*4000, OutSum: 1600, OutSq: 2 * 800 * 800}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("hours %+v, want [%+v]", got, want)
		}
	})
}
