package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/storetest"
)

// TestReportAgentUptime: an agent's uptime is the share of the window's
// minutes (from its enrolment when later) it sent a sample in, rate or
// not, in thousandths of a percent; agents of another site and agents
// enrolled after the window are left out; lowest first.
func TestReportAgentUptime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const from, to = 1_000_020, 1_000_020 + 600 // a 10-minute window
		ids := map[string]int64{}
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, a := range []struct {
				name, site string
				enrolled   int64
			}{{"full", "n", 1}, {"late", "n", from + 300}, {"silent", "n", 1}, {"other", "s", 1}, {"future", "n", to}} {
				id, _, err := tx.CreateAgent(ctx, store.Agent{Name: a.name, Site: a.site, TokenHash: "h-" + a.name, EnrolledAt: a.enrolled})
				if err != nil {
					return err
				}
				ids[a.name] = id
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ins := func(agent string, seq, ts int64, rate bool) {
			if _, err := db.Writer().ExecContext(ctx, `INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns) VALUES ($1, $2, $3, 1, 1, 0, 0, $4, 0)`,
				ids[agent], seq, ts, rate); err != nil {
				t.Fatal(err)
			}
		}
		// full: 10 minutes, two samples in the first (one minute), one
		// without a rate (still a report). late: 4 of its 5 minutes.
		for i := int64(0); i < 10; i++ {
			ins("full", i, from+i*60, i != 3)
		}
		ins("full", 10, from+5, true)
		for i := int64(0); i < 4; i++ {
			ins("late", i, from+300+i*60, true)
		}
		ins("other", 0, from, true)
		ins("full", 99, to, true) // after the window
		got, err := db.ReportAgentUptime(ctx, store.ReportScope{From: from, To: to, Site: "n"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := store.ReportTop{Total: 3, Rows: []store.ReportRow{
			{Keys: []string{"silent"}, Sums: []int64{0, 0}},
			{Keys: []string{"late"}, Sums: []int64{80000, 4}},
			{Keys: []string{"full"}, Sums: []int64{100000, 10}},
		}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("uptime (-want +got):\n%s", d)
		}
	})
}
