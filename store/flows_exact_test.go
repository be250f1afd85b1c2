package store_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/flowagg"
	"netmon/store/record"
	"netmon/store/storetest"
)

// convTotals adds up a conversation answer, remainder row included.
func convTotals(cs []store.Conversation) (packets, octets, flows int64, truncated bool) {
	for _, c := range cs {
		packets += c.Packets
		octets += c.Octets
		flows += c.Flows
		truncated = truncated || c.Truncated
	}
	return
}

// TestFlowTotalsExact: with detail cut to a small budget, every window's
// rows (remainder included) add up to the flows sent in it, from minutes
// or from rolled-up hours alike; a late minute for an hour already rolled
// up is added to both; first_seen is the record's time, not the hour's.
func TestFlowTotalsExact(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().Unix()
		// Three hours of minutes ending an hour ago (whatever the clock,
		// outside the 15-minute window), then one flow now.
		hour := now - now%3600 - 4*3600
		exps := []netip.Addr{addr("192.0.2.1"), addr("192.0.2.2")}
		var fs []record.Flow
		truth := map[int64]int64{} // hour -> octets
		for i := range 6000 {
			ts := hour + int64(i%180)*60 + 7 // three hours of minutes
			f := record.Flow{TS: ts, Exporter: exps[i%2], Src: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), Dst: addr("203.0.113.9"),
				SrcPort: uint16(i), DstPort: 443, Proto: []uint8{6, 17, 1}[i%3], Packets: 2, Octets: uint64(100 + i)}
			fs = append(fs, f)
			truth[ts-ts%3600] += int64(f.Octets)
		}
		// A current minute too, so the 15-minute window has flows.
		cur := record.Flow{TS: now - 30, Exporter: exps[0], Src: addr("10.9.9.9"), Dst: addr("203.0.113.9"), SrcPort: 1, DstPort: 80, Proto: 6, Packets: 1, Octets: 5}
		fs = append(fs, cur)
		truth[cur.TS-cur.TS%3600] += 5
		if _, err := db.WriteFlowMinutes(ctx, flowagg.Sums(flowagg.Config{MinuteRows: 3}, fs)); err != nil {
			t.Fatal(err)
		}
		if n, err := db.BuildFlowHours(ctx, hour+2*3600, 4); err != nil || n != 2 {
			t.Fatalf("built %d hours, %v", n, err)
		}
		// A late flow for the first hour, already rolled up.
		late := record.Flow{TS: hour + 100, Exporter: exps[1], Src: addr("10.8.8.8"), Dst: addr("203.0.113.9"), SrcPort: 2, DstPort: 22, Proto: 6, Packets: 3, Octets: 100000}
		if _, err := db.WriteFlowMinutes(ctx, flowagg.Sums(flowagg.Config{MinuteRows: 3}, []record.Flow{late})); err != nil {
			t.Fatal(err)
		}
		truth[hour] += 100000
		sinceHours := func(from int64) (o int64) {
			for h, v := range truth {
				if h >= from-from%3600 {
					o += v
				}
			}
			return
		}
		var prev int64
		for _, w := range []struct {
			name   string
			window int64
		}{{"15m", 900}, {"1h", 3600}, {"6h", 6 * 3600}, {"24h", 24 * 3600}} {
			var cs []store.Conversation
			var err error
			if w.window >= 6*3600 {
				cs, err = db.ConversationsHourly(ctx, now-w.window, true, "octets", 10, "", store.FlowFilter{}, nil)
			} else {
				cs, err = db.Conversations(ctx, now-w.window, true, "octets", 10, "", store.FlowFilter{}, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			_, octets, _, truncated := convTotals(cs)
			if w.window >= 6*3600 {
				if want := sinceHours(now - w.window); octets != want || !truncated {
					t.Errorf("%s: %d octets (truncated %v), want %d", w.name, octets, truncated, want)
				}
			} else if w.window == 900 && octets != 5 {
				t.Errorf("15m: %d octets, want 5", octets)
			}
			if octets < prev {
				t.Errorf("%s: %d octets, fewer than the shorter window's %d", w.name, octets, prev)
			}
			prev = octets
		}
		// Pairs too, and the flows endpoint's rows.
		pairs, err := db.ConversationsHourly(ctx, now-86400, false, "octets", 10, "", store.FlowFilter{}, nil)
		if _, o, _, _ := convTotals(pairs); err != nil || o != sinceHours(now-86400) {
			t.Errorf("pair totals %d, %v", o, err)
		}
		top, err := db.TopFlows(ctx, hour, 5, "", store.FlowFilter{}, nil)
		if err != nil || !top[len(top)-1].Truncated {
			t.Fatalf("top flows %+v %v", top, err)
		}
		// first_seen of the late 5-tuple is its record's time.
		cs, err := db.ConversationsHourly(ctx, hour, true, "octets", 1, "", store.FlowFilter{}, nil)
		if err != nil || cs[0].Src != "10.8.8.8" || cs[0].First != hour+100 {
			t.Errorf("heaviest 5-tuple %+v %v, want 10.8.8.8 first seen %d", cs, err, hour+100)
		}
	})
}
