package store_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestFlowAggregatesAndQueries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		base := time.Now().Truncate(time.Minute).Add(-10 * time.Minute).Unix()
		exp, a, b, c := addr("192.0.2.1"), addr("10.0.0.1"), addr("203.0.113.7"), addr("198.51.100.9")
		fs := []record.Flow{
			{TS: base + 1, Exporter: exp, Src: a, Dst: b, SrcPort: 50000, DstPort: 443, Proto: 6, Packets: 10, Octets: 1000},
			{TS: base + 30, Exporter: exp, Src: a, Dst: b, SrcPort: 50000, DstPort: 443, Proto: 6, Packets: 5, Octets: 500},   // same minute: summed
			{TS: base + 61, Exporter: exp, Src: a, Dst: b, SrcPort: 50000, DstPort: 443, Proto: 6, Packets: 1, Octets: 100},   // next minute
			{TS: base + 62, Exporter: exp, Src: b, Dst: a, SrcPort: 443, DstPort: 50000, Proto: 6, Packets: 20, Octets: 9000}, // reverse
			{TS: base + 70, Exporter: exp, Src: a, Dst: c, SrcPort: 5353, DstPort: 53, Proto: 17, Packets: 1, Octets: 80},
		}
		n, err := db.WriteFlows(ctx, fs)
		if err != nil || n != 4 {
			t.Fatalf("WriteFlows: %d rows, %v", n, err)
		}
		// A second batch adds to the stored minute.
		if _, err := db.WriteFlows(ctx, fs[:1]); err != nil {
			t.Fatal(err)
		}
		top, err := db.TopFlows(ctx, base, 10, "", store.FlowFilter{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.FlowRow{
			{TS: base + 62, Device: "192.0.2.1", Src: "203.0.113.7", Dst: "10.0.0.1", SrcPort: 443, DstPort: 50000, Proto: 6, Packets: 20, Octets: 9000, Flows: 1, First: base + 62, LastSeen: base + 62},
			{TS: base + 61, Device: "192.0.2.1", Src: "10.0.0.1", Dst: "203.0.113.7", SrcPort: 50000, DstPort: 443, Proto: 6, Packets: 26, Octets: 2600, Flows: 4, First: base + 1, LastSeen: base + 61},
			{TS: base + 70, Device: "192.0.2.1", Src: "10.0.0.1", Dst: "198.51.100.9", SrcPort: 5353, DstPort: 53, Proto: 17, Packets: 1, Octets: 80, Flows: 1, First: base + 70, LastSeen: base + 70},
		}
		if diff := cmp.Diff(top, want); diff != "" {
			t.Errorf("top flows (-got, +want):\n%s", diff)
		}
		// Site scope: the exporter is no device: a site sees nothing.
		if rows, _ := db.TopFlows(ctx, base, 10, "a", store.FlowFilter{}, nil); len(rows) != 0 {
			t.Errorf("site a sees %d rows of an exporter of no site", len(rows))
		}
		if _, err := db.Writer().ExecContext(ctx, `INSERT INTO devices (name, host, site, created_at) VALUES ('r1', '192.0.2.1', 'a', 0)`); err != nil {
			t.Fatal(err)
		}
		if rows, _ := db.TopFlows(ctx, base, 10, "a", store.FlowFilter{}, nil); len(rows) != 3 {
			t.Errorf("site a sees %d rows of its exporter", len(rows))
		}
		if rows, _ := db.TopFlows(ctx, base, 10, "b", store.FlowFilter{}, nil); len(rows) != 0 {
			t.Errorf("site b sees %d rows", len(rows))
		}
		conv, err := db.Conversations(ctx, base, false, "octets", 10, "", store.FlowFilter{}, nil)
		if err != nil || len(conv) != 3 || conv[0].Src != "203.0.113.7" || conv[0].Octets != 9000 || conv[1].Flows != 4 {
			t.Errorf("pair conversations %+v %v", conv, err)
		}
		pair, err := db.PairFlows(ctx, "203.0.113.7", "10.0.0.1", base, 100, "", nil)
		if err != nil || len(pair) != 3 {
			t.Errorf("pair flows %+v %v", pair, err)
		}
	})
}

// TestEventPaging pages through flow and syslog events with the cursor:
// every event exactly once, in order, whatever the page size.
func TestEventPaging(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		base := time.Now().Truncate(time.Minute).Add(-5 * time.Minute).Unix()
		var fs []record.Flow
		for i := range 25 {
			fs = append(fs, record.Flow{TS: base + int64(i%3)*60, Exporter: addr("192.0.2.1"), Src: addr("10.0.0.1"), Dst: addr("10.0.0.2"), SrcPort: uint16(1000 + i), DstPort: 80, Proto: 6, Packets: 1, Octets: 10})
		}
		if _, err := db.WriteFlows(ctx, fs); err != nil {
			t.Fatal(err)
		}
		var es []record.SyslogEvent
		for i := range 17 {
			es = append(es, record.SyslogEvent{TS: base + int64(i%3)*60, Host: "h", Severity: 5, Message: "m"})
		}
		if _, err := db.WriteSyslog(ctx, es); err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{1, 4, 7, 100} {
			seen := map[string]bool{}
			var after *store.EventCursor
			var prev *store.Event
			total := 0
			for page := 0; page < 100; page++ {
				f, err := db.FlowEvents(ctx, base-60, store.FlowFilter{}, after, size+1, "")
				if err != nil {
					t.Fatal(err)
				}
				s, err := db.SyslogEvents(ctx, base-60, "", "", after, size+1, "")
				if err != nil {
					t.Fatal(err)
				}
				all := mergeEvents(f, s)
				more := len(all) > size
				if more {
					all = all[:size]
				}
				for i := range all {
					e := all[i]
					id := e.Type + e.Key
					if seen[id] {
						t.Fatalf("size %d: %s repeated", size, id)
					}
					seen[id] = true
					if prev != nil && (e.TS > prev.TS || (e.TS == prev.TS && e.Type < prev.Type)) {
						t.Fatalf("size %d: order broken at %+v after %+v", size, e, prev)
					}
					prev = &all[i]
					total++
				}
				if !more {
					break
				}
				last := all[len(all)-1]
				after = &store.EventCursor{TS: last.TS, Type: last.Type, Key: last.Key}
			}
			if total != 25+17 {
				t.Errorf("size %d: %d events, want 42", size, total)
			}
		}
	})
}

// mergeEvents is the API's merge: stable on (ts desc, type asc).
func mergeEvents(a, b []store.Event) []store.Event {
	out := make([]store.Event, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && (a[i].TS > b[j].TS || (a[i].TS == b[j].TS && a[i].Type <= b[j].Type))):
			out = append(out, a[i])
			i++
		default:
			out = append(out, b[j])
			j++
		}
	}
	return out
}

func TestConversationsHourly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		hour := time.Now().Truncate(time.Hour).Add(-3 * time.Hour).Unix()
		var fs []record.Flow
		// Three hours; in each, one heavy conversation and 20 small ones.
		for h := int64(0); h < 3; h++ {
			fs = append(fs, record.Flow{TS: hour + h*3600 + 10, Exporter: addr("192.0.2.1"), Src: addr("10.0.0.1"), Dst: addr("203.0.113.1"), SrcPort: 1000, DstPort: 443, Proto: 6, Packets: 100, Octets: 100000})
			for i := range 20 {
				fs = append(fs, record.Flow{TS: hour + h*3600 + 20, Exporter: addr("192.0.2.1"), Src: addr("10.0.0.2"), Dst: addr("203.0.113.2"), SrcPort: uint16(2000 + i), DstPort: 53, Proto: 17, Packets: 1, Octets: 100})
			}
		}
		if _, err := db.WriteFlows(ctx, fs); err != nil {
			t.Fatal(err)
		}
		// The first two hours rolled up, the third still read from its
		// minutes: the same answers.
		if n, err := db.BuildFlowHours(ctx, hour+2*3600, 1000); err != nil || n != 2 {
			t.Fatalf("built %d hours, %v", n, err)
		}
		got, err := db.ConversationsHourly(ctx, hour, true, "octets", 3, "", store.FlowFilter{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Three rows, then the rest of the window (the limit cut it).
		if len(got) != 4 || !got[3].Truncated || got[3].Flows != 60-6 || got[0].Octets != 300000 || got[0].Packets != 300 || got[0].Flows != 3 || got[0].First != hour+10 {
			t.Fatalf("heavy hitter %+v", got)
		}
		// With every row read, the small ones add up exactly too.
		all, err := db.ConversationsHourly(ctx, hour, true, "octets", 100, "", store.FlowFilter{}, nil)
		if err != nil || len(all) != 21 || all[1].Octets != 300 {
			t.Fatalf("all %d rows %+v %v", len(all), all, err)
		}
		pairs, err := db.ConversationsHourly(ctx, hour, false, "packets", 10, "", store.FlowFilter{}, nil)
		if err != nil || len(pairs) != 2 || pairs[0].Packets != 300 || pairs[1].Packets != 60 {
			t.Fatalf("pairs %+v %v", pairs, err)
		}
		// Same totals as the minute table over the same hours.
		minute, err := db.Conversations(ctx, hour, true, "octets", 1, "", store.FlowFilter{}, nil)
		if err != nil || minute[0].Octets != got[0].Octets {
			t.Fatalf("minute path %+v vs hour path %+v", minute, got[0])
		}
	})
}
