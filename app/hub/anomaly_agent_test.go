package hub

import (
	"context"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/storetest"
)

// TestAgentRateMinutes: the anomaly rule's agent series on both
// databases: telemetry counters through the intake become per-minute
// averages of the interface rates in bits per second (the first batch,
// without a previous one, has no rate and is left out).
func TestAgentRateMinutes(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, _ := fleetHub(t, dsn, func(c *config.HubConfig) { c.Alerts.Enabled = false })
		ctx := context.Background()
		a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-rates", MachineID: "m-rates"}))
		minute := time.Now().Unix()/60*60 - 600
		// rx grows 1000 B/s then 3000 B/s within one minute, then 500 B/s
		// in the next: minute averages 2000 and 500 B/s = 16000 and 4000 bit/s.
		for i, b := range []struct {
			ts     int64
			rx, tx uint64
		}{{minute + 0, 0, 0}, {minute + 10, 10_000, 1_000}, {minute + 20, 40_000, 2_000}, {minute + 70, 65_000, 7_000}} {
			telemetry(t, h, a.AgentToken, wire.Telemetry{TS: b.ts, Seq: uint64(i + 1), Interfaces: []wire.Interface{{Name: "eth0", RxBytes: b.rx, TxBytes: b.tx}}}).must(t, 200)
		}
		// The intake writes through the queue: the samples land in their
		// own time, so wait for all of them (both minutes at their final
		// averages), not merely for two minutes to exist.
		want := []store.RateMinute{{TS: minute, InBps: 16000, OutBps: 800}, {TS: minute + 60, InBps: 4000, OutBps: 800}}
		var got []store.RateMinute
		eventually(t, "the samples stored", func() bool {
			var err error
			got, err = h.db.RateMinutes(ctx, a.AgentID, minute, minute+120)
			return err == nil && len(got) == 2 && got[0] == want[0] && got[1] == want[1]
		})
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("minute %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}
