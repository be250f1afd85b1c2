package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestRateHours: the hub capture's minutes aggregate by hour with the
// exact count, sums and sums of squares of the rates, [from, to) bounds
// held, on both dialects.
func TestRateHours(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const h0 = 1_795_000_000 - 1_795_000_000%3600
		// Hour h0: 3 minutes of 60 s at 750, 1500, 2250 bytes/s in (6000,
		// 12000, 18000 bit/s) and 75 bytes/s out; one of 30 s at 750
		// bytes/s in the next hour; one before from.
		for i, in := range []int64{45000, 90000, 135000} {
			if err := db.AddTrafficMinute(ctx, store.TrafficMinute{TS: h0 + int64(i)*60, InBytes: in, OutBytes: 4500, Seconds: 60}); err != nil {
				t.Fatal(err)
			}
		}
		for _, m := range []store.TrafficMinute{{TS: h0 + 3600, InBytes: 22500, OutBytes: 0, Seconds: 30}, {TS: h0 - 60, InBytes: 1, Seconds: 60}} {
			if err := db.AddTrafficMinute(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		got, err := db.RateHours(ctx, 0, h0, h0+7200)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.RateHour{
			{TS: h0, N: 3, InSum: 36000, InSq: 6000*6000 + 12000*12000 + 18000*18000, OutSum: 1800, OutSq: 3 * 600 * 600},
			{TS: h0 + 3600, N: 1, InSum: 6000, InSq: 6000 * 6000},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("hours (-want +got):\n%s", d)
		}
	})
}

// TestDeepTopAndMinutes: the top N processes by bytes (unattributed
// excluded) and domains by queries, ties by name; the minute series of
// the names asked for, PIDs summed, as bit/s and queries/min.
func TestDeepTopAndMinutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a := siteAgent(t, db, "a", "north")
		const m0 = 1_795_000_020 - 1_795_000_020%60
		batch := func(seq uint64, ts int64, curl uint64) record.Deep {
			return record.Deep{AgentID: a, Seq: seq, TS: ts,
				Processes: []record.ProcessBytes{
					{Process: "curl", PID: 10, BytesIn: curl, BytesOut: 0},
					{Process: "curl", PID: 11, BytesIn: 0, BytesOut: 150},
					{Process: "(unattributed)", BytesIn: 1 << 30},
					{Process: "sshd", PID: 7, BytesIn: 300, BytesOut: 0},
					{Process: "apt", PID: 8, BytesIn: 300, BytesOut: 0},
				},
				DNS: []record.DNSCount{{Domain: "a.test", Process: "curl", Queries: 4}, {Domain: "a.test", Process: "apt", Queries: 2}, {Domain: "b.test", Process: "curl", Queries: 1}},
			}
		}
		if _, err := db.WriteDeep(ctx, []record.Deep{batch(1, m0, 600), batch(2, m0+60, 1350)}); err != nil {
			t.Fatal(err)
		}
		procs, domains, err := db.DeepTop(ctx, a, m0, m0+120, 2)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]string{"curl", "apt"}, procs); d != "" {
			t.Errorf("procs (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]string{"a.test", "b.test"}, domains); d != "" {
			t.Errorf("domains (-want +got):\n%s", d)
		}
		got, err := db.DeepMinutes(ctx, a, m0, m0+120, []string{"curl"}, []string{"a.test"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]store.SeriesMinute{
			"proc:curl":  {{TS: m0, V: 750 * 8 / 60.0}, {TS: m0 + 60, V: 1500 * 8 / 60.0}},
			"dns:a.test": {{TS: m0, V: 6}, {TS: m0 + 60, V: 6}},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("minutes (-want +got):\n%s", d)
		}
	})
}
