package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/flowagg"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestOpenMinutesRead: the minutes not written yet, handed to the reads,
// give the answer the same minutes give once written (rows, order,
// remainder, filters), with a stored part summed with an open part, and
// under a site scope an open minute of another site's exporter is not
// seen (issue 28).
func TestOpenMinutesRead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().Unix()
		minute := now - now%60
		e1, e2 := addr("192.0.2.1"), addr("192.0.2.2")
		a, b, c := addr("10.0.0.1"), addr("203.0.113.7"), addr("198.51.100.9")
		old := []record.Flow{
			{TS: minute - 120, Exporter: e1, Src: a, Dst: b, SrcPort: 50000, DstPort: 443, Proto: 6, Packets: 10, Octets: 1000},
		}
		fresh := []record.Flow{
			{TS: minute + 1, Exporter: e1, Src: a, Dst: b, SrcPort: 50000, DstPort: 443, Proto: 6, Packets: 5, Octets: 500},
			{TS: minute + 2, Exporter: e1, Src: b, Dst: a, SrcPort: 443, DstPort: 50000, Proto: 6, Packets: 7, Octets: 7000},
			{TS: minute + 3, Exporter: e2, Src: a, Dst: c, SrcPort: 5353, DstPort: 53, Proto: 17, Packets: 1, Octets: 80},
		}
		if _, err := db.WriteFlows(ctx, old); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Writer().ExecContext(ctx, `INSERT INTO devices (name, host, site, created_at) VALUES ('r1', '192.0.2.1', 'a', 0), ('r2', '192.0.2.2', 'b', 0)`); err != nil {
			t.Fatal(err)
		}
		// Two rows per minute in detail, so the remainder row shows too.
		open := flowagg.Sums(flowagg.Config{MinuteRows: 2}, fresh)
		type answer struct {
			Top, TopSiteB, TopPort, Pair []store.FlowRow
			Conv, Pairs, Hourly          []store.Conversation
			ConvSiteA                    []store.Conversation
			Series, SeriesSiteB          *store.FlowSeries
		}
		read := func(open []flowagg.Minute) answer {
			t.Helper()
			var x answer
			var err error
			from := minute - 600
			must := func(e error) {
				t.Helper()
				if e != nil {
					t.Fatal(e)
				}
			}
			x.Top, err = db.TopFlows(ctx, from, 2, "", store.FlowFilter{}, open)
			must(err)
			x.TopSiteB, err = db.TopFlows(ctx, from, 10, "b", store.FlowFilter{}, open)
			must(err)
			x.TopPort, err = db.TopFlows(ctx, from, 10, "", store.FlowFilter{Port: 443}, open)
			must(err)
			x.Conv, err = db.Conversations(ctx, from, true, "octets", 10, "", store.FlowFilter{}, open)
			must(err)
			x.Pairs, err = db.Conversations(ctx, from, false, "packets", 10, "", store.FlowFilter{}, open)
			must(err)
			x.ConvSiteA, err = db.Conversations(ctx, from, true, "octets", 10, "a", store.FlowFilter{}, open)
			must(err)
			x.Pair, err = db.PairFlows(ctx, "10.0.0.1", "203.0.113.7", from, 10, "a", open)
			must(err)
			x.Hourly, err = db.ConversationsHourly(ctx, minute-86400, true, "octets", 10, "", store.FlowFilter{}, open)
			must(err)
			x.Series, err = db.FlowSeries(ctx, minute-300, minute, "dst", 2, "", store.FlowFilter{}, open)
			must(err)
			x.SeriesSiteB, err = db.FlowSeries(ctx, minute-300, minute, "exporter", 5, "b", store.FlowFilter{}, open)
			must(err)
			return x
		}
		before := read(open)
		// The stored minute and the open one add up.
		if got := before.Conv[0]; got.Src != "203.0.113.7" || got.Octets != 7000 {
			t.Errorf("first conversation %+v", got)
		}
		var total, totalA int64
		for _, r := range before.Conv {
			total += r.Octets
		}
		for _, r := range before.ConvSiteA {
			totalA += r.Octets
			if r.Src == "198.51.100.9" || r.Dst == "198.51.100.9" {
				t.Errorf("site a sees site b's open flow %+v", r)
			}
		}
		if total != 8580 || totalA != 8500 {
			t.Errorf("octets %d (site a %d), want 8580 (8500)", total, totalA)
		}
		if len(before.Pair) != 3 || before.Pair[0].Octets+before.Pair[1].Octets != 7500 {
			t.Errorf("pair flows %+v", before.Pair)
		}
		// The chart's series counts the open minute too: the last point
		// holds its 7 580 octets (and the one 2 minutes back the stored
		// 1 000); site b's series holds its exporter's 80 only.
		if sr := before.Series; len(sr.Times) != 6 || sr.Times[5] != minute {
			t.Errorf("series times %v", sr.Times)
		} else {
			var last, back2 int64
			for i := range sr.Keys {
				last += sr.Octets[i][5]
				back2 += sr.Octets[i][3]
			}
			if last+sr.Other[5] != 7580 || back2+sr.Other[3] != 1000 {
				t.Errorf("series minute totals %d and %d, want 7580 and 1000: %+v", last+sr.Other[5], back2+sr.Other[3], sr)
			}
		}
		if sb := before.SeriesSiteB; len(sb.Keys) != 1 || sb.Keys[0] != "192.0.2.2" || sb.Octets[0][5] != 80 {
			t.Errorf("site b's series %+v", sb)
		}
		if len(before.TopSiteB) != 1 || before.TopSiteB[0].Octets != 80 {
			t.Errorf("site b's top flows %+v", before.TopSiteB)
		}
		if _, err := db.WriteFlowMinutes(ctx, open); err != nil {
			t.Fatal(err)
		}
		after := read(nil)
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("open minutes read (-) differ from the same minutes written (+):\n%s", diff)
		}
	})
}
