package store_test

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/flowagg"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestLiveFleet: agents of two sites and of the hub, their samples inside
// and outside the 90 s window, and flows of the counted minute and of its
// neighbours give exact counts and sums per site and in all. The query:
// online within three 30 s telemetry intervals of aiNow, the samples of
// the 90 s before it, the flows of the minute that ended at it.
func TestLiveFleet(t *testing.T) {
	q := store.LiveFleetQuery{OnlineSince: aiNow - 90, SamplesSince: aiNow - 90, FlowMinute: aiNow - 60}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()

		empty, err := db.LiveFleet(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(store.LiveFleet{Sites: []store.LiveFleetSite{}}, empty); diff != "" {
			t.Errorf("empty database (-want +got):\n%s", diff)
		}

		ids := seedAIAgents(t, db, [][2]string{{"n1", "n"}, {"n2", "n"}, {"n3", "n"}, {"s1", "s"}, {"h1", ""}})
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := db.Writer().ExecContext(ctx, q, args...); err != nil {
				t.Fatal(err)
			}
		}
		for name, seen := range map[string]int64{
			"n1": aiNow - 10,  // online
			"n2": aiNow - 200, // offline: more than three intervals ago
			"n3": 0,           // never seen: offline
			"s1": aiNow - 90,  // online: exactly three intervals ago
			"h1": aiNow - 5,   // online
		} {
			exec(`UPDATE agents SET last_seen = $1 WHERE id = $2`, seen, ids[name])
		}
		seq := int64(0)
		sample := func(agent string, ts int64, rx, tx, pps float64, rate bool) {
			seq++
			exec(`INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns) VALUES ($1, $2, $3, $4, $5, 0, $6, $7, 0)`,
				ids[agent], seq, ts, rx, tx, pps, rate)
		}
		sample("n1", aiNow-80, 100, 10, 5, true)
		sample("n1", aiNow-50, 300, 30, 15, true)
		sample("n1", aiNow-20, 200, 20, 10, true)
		sample("n1", aiNow-30, 5555, 5555, 5555, false) // no rate: not averaged
		sample("n1", aiNow-91, 9999, 9999, 9999, true)  // before the window
		sample("n2", aiNow-90, 50, 5, 1, true)          // the window's first second
		sample("n2", aiNow-150, 7777, 7777, 7777, true)
		sample("s1", aiNow-60, 1000, 400, 80, true)
		sample("s1", aiNow-30, 3000, 600, 120, true)
		sample("h1", aiNow-300, 1, 1, 1, true) // nothing in the window: adds 0

		err = db.InTx(ctx, func(tx *store.Tx) error {
			for _, d := range []store.Device{
				{Name: "edge-n", Host: "192.0.2.1", Site: "n"},
				{Name: "edge-n-api", Host: "192.0.2.1", Site: "n"}, // the same exporter twice: counted once
				{Name: "edge-s", Host: "192.0.2.2", Site: "s"},
				{Name: "edge-t", Host: "192.0.2.3", Site: "t"}, // a site with flows and no agents
			} {
				d.Enabled, d.CreatedAt = true, 1
				if _, err := tx.InsertDevice(ctx, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var fs []record.Flow
		flows := func(n int, ts int64, exporter string) {
			for i := range n {
				// Distinct 5-tuples: each record is its own row's flow.
				fs = append(fs, record.Flow{TS: ts, Exporter: netip.MustParseAddr(exporter), Src: netip.MustParseAddr(fmt.Sprintf("10.0.0.%d", i+1)),
					Dst: netip.MustParseAddr("203.0.113.9"), SrcPort: 40000, DstPort: 443, Proto: 6, Packets: 2, Octets: 100})
			}
		}
		flows(3, aiNow-50, "192.0.2.1")
		flows(2, aiNow-10, "192.0.2.2")
		flows(1, aiNow-1, "192.0.2.3")
		flows(4, aiNow-30, "192.0.2.99") // an exporter of no device: every site's only
		flows(5, aiNow-61, "192.0.2.1")  // the minute before
		flows(7, aiNow, "192.0.2.1")     // the minute after
		if _, err := db.WriteFlowMinutes(ctx, flowagg.Sums(flowagg.DefaultConfig(), fs)); err != nil {
			t.Fatal(err)
		}

		got, err := db.LiveFleet(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		want := store.LiveFleet{
			All: store.LiveFleetSite{AgentsOnline: 3, AgentsTotal: 5, RxBps: 2250, TxBps: 525, Pps: 111, Flows: 10},
			Sites: []store.LiveFleetSite{
				{Site: "", AgentsOnline: 1, AgentsTotal: 1},
				{Site: "n", AgentsOnline: 1, AgentsTotal: 3, RxBps: 250, TxBps: 25, Pps: 11, Flows: 3},
				{Site: "s", AgentsOnline: 1, AgentsTotal: 1, RxBps: 2000, TxBps: 500, Pps: 100, Flows: 2},
				{Site: "t", Flows: 1},
			},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("live fleet (-want +got):\n%s", diff)
		}
	})
}
