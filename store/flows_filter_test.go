package store_test

import (
	"cmp"
	"context"
	"fmt"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestFlowFilters: each filter of the flow reads keeps exactly its rows,
// on the minute table, the hourly roll-up and the event list, and the
// filtered remainder sums only matching rows.
func TestFlowFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		hour := time.Now().Truncate(time.Hour).Add(-2 * time.Hour).Unix()
		e1, e2 := addr("192.0.2.1"), addr("192.0.2.2")
		a, b, c := addr("10.0.0.1"), addr("203.0.113.7"), addr("198.51.100.9")
		fs := []record.Flow{
			{TS: hour + 10, Exporter: e1, Src: a, Dst: b, SrcPort: 50000, DstPort: 443, Proto: 6, Packets: 10, Octets: 5000},
			{TS: hour + 20, Exporter: e1, Src: b, Dst: a, SrcPort: 443, DstPort: 50000, Proto: 6, Packets: 8, Octets: 4000},
			{TS: hour + 30, Exporter: e1, Src: a, Dst: c, SrcPort: 5353, DstPort: 53, Proto: 17, Packets: 1, Octets: 300},
			{TS: hour + 40, Exporter: e2, Src: c, Dst: b, SrcPort: 40000, DstPort: 443, Proto: 17, Packets: 3, Octets: 2000},
			{TS: hour + 50, Exporter: e2, Src: c, Dst: a, SrcPort: 0, DstPort: 0, Proto: 1, Packets: 2, Octets: 100},
		}
		if _, err := db.WriteFlows(ctx, fs); err != nil {
			t.Fatal(err)
		}
		type row struct {
			Exp, Src, Dst string
			Octets        int64
		}
		rowsOf := func(rs []store.FlowRow) []row {
			out := []row{}
			for _, r := range rs {
				out = append(out, row{r.Device, r.Src, r.Dst, r.Octets})
			}
			return out
		}
		convOf := func(cs []store.Conversation) []row {
			out := []row{}
			for _, c := range cs {
				out = append(out, row{"", c.Src, c.Dst, c.Octets})
			}
			return out
		}
		const A, B, C, E1, E2 = "10.0.0.1", "203.0.113.7", "198.51.100.9", "192.0.2.1", "192.0.2.2"
		cases := []struct {
			name string
			f    store.FlowFilter
			want []row // TopFlows, octets descending
		}{
			{"none", store.FlowFilter{}, []row{{E1, A, B, 5000}, {E1, B, A, 4000}, {E2, C, B, 2000}, {E1, A, C, 300}, {E2, C, A, 100}}},
			{"exporter", store.FlowFilter{Exporter: E2}, []row{{E2, C, B, 2000}, {E2, C, A, 100}}},
			{"addr src or dst", store.FlowFilter{Addr: C}, []row{{E2, C, B, 2000}, {E1, A, C, 300}, {E2, C, A, 100}}},
			{"port src or dst", store.FlowFilter{Port: 443}, []row{{E1, A, B, 5000}, {E1, B, A, 4000}, {E2, C, B, 2000}}},
			{"proto", store.FlowFilter{Proto: 17}, []row{{E2, C, B, 2000}, {E1, A, C, 300}}},
			{"all four", store.FlowFilter{Exporter: E1, Addr: A, Port: 443, Proto: 6}, []row{{E1, A, B, 5000}, {E1, B, A, 4000}}},
			{"nothing matches", store.FlowFilter{Exporter: E2, Proto: 6}, []row{}},
		}
		for _, tc := range cases {
			top, err := db.TopFlows(ctx, hour, 100, "", tc.f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(rowsOf(top), tc.want); diff != "" {
				t.Errorf("%s: TopFlows (-got, +want):\n%s", tc.name, diff)
			}
			// Conversations by 5-tuple: the same groups (one exporter each).
			var wantConv []row
			for _, r := range tc.want {
				wantConv = append(wantConv, row{"", r.Src, r.Dst, r.Octets})
			}
			if wantConv == nil {
				wantConv = []row{}
			}
			conv, err := db.Conversations(ctx, hour, true, "octets", 100, "", tc.f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(convOf(conv), wantConv); diff != "" {
				t.Errorf("%s: Conversations (-got, +want):\n%s", tc.name, diff)
			}
			hourly, err := db.ConversationsHourly(ctx, hour, true, "octets", 100, "", tc.f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(convOf(hourly), wantConv); diff != "" {
				t.Errorf("%s: ConversationsHourly (-got, +want):\n%s", tc.name, diff)
			}
			var evs []row
			es, err := db.FlowEvents(ctx, hour, tc.f, nil, 100, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				evs = append(evs, row{e.Device, e.Data["src"].(string), e.Data["dst"].(string), e.Data["octets"].(int64)})
			}
			if len(evs) != len(tc.want) {
				t.Errorf("%s: FlowEvents %d events %+v, want %d", tc.name, len(evs), evs, len(tc.want))
			}
		}
		// The limit cuts a filtered list: the remainder sums only the
		// matching rows the limit left out (4000 + 2000), not the others.
		top, err := db.TopFlows(ctx, hour, 1, "", store.FlowFilter{Port: 443}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(top) != 2 || !top[1].Truncated || top[1].Octets != 6000 || top[1].Packets != 11 || top[1].Flows != 2 {
			t.Errorf("filtered remainder %+v", top)
		}
		// The hourly roll-up, once built, filters the same way.
		if n, err := db.BuildFlowHours(ctx, hour+3600, 1000); err != nil || n != 1 {
			t.Fatalf("built %d hours, %v", n, err)
		}
		hourly, err := db.ConversationsHourly(ctx, hour, false, "octets", 100, "", store.FlowFilter{Exporter: E2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(convOf(hourly), []row{{"", C, B, 2000}, {"", C, A, 100}}); diff != "" {
			t.Errorf("built hour, exporter filter (-got, +want):\n%s", diff)
		}
		hourly, err = db.ConversationsHourly(ctx, hour, true, "octets", 100, "", store.FlowFilter{Addr: A, Proto: 6}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := gocmp.Diff(convOf(hourly), []row{{"", A, B, 5000}, {"", B, A, 4000}}); diff != "" {
			t.Errorf("built hour, addr+proto filter (-got, +want):\n%s", diff)
		}
	})
}

// TestEventFilters: the address, port, protocol and domain filters of
// GET /api/v1/events on each type that carries them.
func TestEventFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ag := siteAgent(t, db, "a", "")
		now := time.Now().Unix()
		now -= now % 60
		d := record.Deep{AgentID: ag, Seq: 1, TS: now - 60,
			DNS: []record.DNSCount{{Domain: "example.com", Process: "curl", Queries: 1}, {Domain: "www.example.com", Process: "curl", Queries: 2}, {Domain: "wwwxexample.com", Process: "curl", Queries: 3}, {Domain: "other.org", Process: "curl", Queries: 4}},
			L7:  []record.L7Hit{{Host: "api.example.com", Kind: "tls", Process: "curl", Hits: 1}, {Host: "h.example.net", Kind: "http", Process: "wget", Hits: 1}},
			Remotes: []record.RemoteBytes{{Process: "curl", Proto: "tcp", IP: "10.0.0.1", Port: 443, BytesIn: 1}, {Process: "dig", Proto: "udp", IP: "10.0.0.1", Port: 53, BytesIn: 2},
				{Process: "curl", Proto: "tcp", IP: "10.0.0.2", Port: 443, BytesIn: 3}},
		}
		if _, err := db.WriteDeep(ctx, []record.Deep{d}); err != nil {
			t.Fatal(err)
		}
		scope := store.DeepScope{From: now - 3600}
		names := func(typ string, f store.EventFilter) []string {
			t.Helper()
			es, err := db.DeepEvents(ctx, typ, scope, f, nil, 100)
			if err != nil {
				t.Fatal(err)
			}
			out := []string{}
			for _, e := range es {
				if typ == "connection.seen" {
					out = append(out, fmt.Sprintf("%s %s:%d", e.Data["proto"], e.Data["remote_ip"], e.Data["remote_port"]))
					continue
				}
				out = append(out, cmp.Or(e.Data["domain"], e.Data["host"]).(string))
			}
			return out
		}
		cases := []struct {
			typ  string
			f    store.EventFilter
			want []string
		}{
			{"dns.query", store.EventFilter{Domain: "example.com"}, []string{"example.com"}},
			{"dns.query", store.EventFilter{Domain: "*.example.com"}, []string{"www.example.com", "example.com"}},
			{"dns.query", store.EventFilter{Domain: "*.xexample.com"}, []string{}},
			{"dns.query", store.EventFilter{Addr: "10.0.0.1"}, []string{}},
			{"dns.query", store.EventFilter{}, []string{"wwwxexample.com", "www.example.com", "other.org", "example.com"}},
			{"tls.sni_observed", store.EventFilter{Domain: "*.example.com"}, []string{"api.example.com"}},
			{"http.host_observed", store.EventFilter{Domain: "*.example.com"}, []string{}},
			{"http.host_observed", store.EventFilter{Domain: "h.example.net"}, []string{"h.example.net"}},
			{"connection.seen", store.EventFilter{Domain: "example.com"}, []string{}},
			{"connection.seen", store.EventFilter{Addr: "10.0.0.1"}, []string{"udp 10.0.0.1:53", "tcp 10.0.0.1:443"}},
			{"connection.seen", store.EventFilter{Port: 443}, []string{"tcp 10.0.0.2:443", "tcp 10.0.0.1:443"}},
			{"connection.seen", store.EventFilter{Proto: 17}, []string{"udp 10.0.0.1:53"}},
			{"connection.seen", store.EventFilter{Addr: "10.0.0.1", Port: 443, Proto: 6}, []string{"tcp 10.0.0.1:443"}},
			{"connection.seen", store.EventFilter{Proto: 1}, []string{}},
		}
		for _, tc := range cases {
			if diff := gocmp.Diff(names(tc.typ, tc.f), tc.want); diff != "" {
				t.Errorf("%s %+v (-got, +want):\n%s", tc.typ, tc.f, diff)
			}
		}
		// Syslog by source address: the device and address filters.
		if !(store.EventFilter{Addr: "192.0.2.9"}).Applies("syslog.received") || (store.EventFilter{Port: 514}).Applies("syslog.received") {
			t.Error("syslog takes an address filter and no port filter")
		}
	})
}

// TestFlowSeries: the top values of each dimension per minute, the rest
// in Other, every minute of the window present.
func TestFlowSeries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		base := time.Now().Truncate(time.Minute).Add(-10 * time.Minute).Unix()
		e1, e2 := addr("192.0.2.1"), addr("192.0.2.2")
		a, b, c := addr("10.0.0.1"), addr("203.0.113.7"), addr("198.51.100.9")
		fs := []record.Flow{
			{TS: base + 10, Exporter: e1, Src: a, Dst: b, SrcPort: 50000, DstPort: 443, Proto: 6, Packets: 1, Octets: 6000},
			{TS: base + 70, Exporter: e1, Src: b, Dst: a, SrcPort: 443, DstPort: 50000, Proto: 6, Packets: 1, Octets: 3000},
			{TS: base + 75, Exporter: e2, Src: a, Dst: c, SrcPort: 5353, DstPort: 53, Proto: 17, Packets: 1, Octets: 600},
			{TS: base + 130, Exporter: e2, Src: c, Dst: b, SrcPort: 40000, DstPort: 22, Proto: 6, Packets: 1, Octets: 120},
		}
		if _, err := db.WriteFlows(ctx, fs); err != nil {
			t.Fatal(err)
		}
		times := []int64{base, base + 60, base + 120, base + 180}
		cases := []struct {
			dim    string
			top    int
			f      store.FlowFilter
			keys   []string
			octets [][]int64
			other  []int64
		}{
			{"port", 2, store.FlowFilter{}, []string{"443", "53"}, [][]int64{{6000, 3000, 0, 0}, {0, 600, 0, 0}}, []int64{0, 0, 120, 0}},
			{"exporter", 5, store.FlowFilter{}, []string{"192.0.2.1", "192.0.2.2"}, [][]int64{{6000, 3000, 0, 0}, {0, 600, 120, 0}}, []int64{0, 0, 0, 0}},
			{"src", 1, store.FlowFilter{}, []string{"10.0.0.1"}, [][]int64{{6000, 600, 0, 0}}, []int64{0, 3000, 120, 0}},
			{"dst", 3, store.FlowFilter{Proto: 6}, []string{"203.0.113.7", "10.0.0.1"}, [][]int64{{6000, 0, 120, 0}, {0, 3000, 0, 0}}, []int64{0, 0, 0, 0}},
			{"proto", 5, store.FlowFilter{Exporter: "192.0.2.2"}, []string{"17", "6"}, [][]int64{{0, 600, 0, 0}, {0, 0, 120, 0}}, []int64{0, 0, 0, 0}},
			{"port", 5, store.FlowFilter{Addr: "198.51.100.9"}, []string{"53", "22"}, [][]int64{{0, 600, 0, 0}, {0, 0, 120, 0}}, []int64{0, 0, 0, 0}},
			{"port", 5, store.FlowFilter{Port: 8080}, []string{}, [][]int64{}, []int64{0, 0, 0, 0}},
		}
		for _, tc := range cases {
			got, err := db.FlowSeries(ctx, base+59, base+180+59, tc.dim, tc.top, "", tc.f, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := &store.FlowSeries{Times: times, Keys: tc.keys, Octets: tc.octets, Other: tc.other}
			if diff := gocmp.Diff(got, want); diff != "" {
				t.Errorf("%s top %d %+v (-got, +want):\n%s", tc.dim, tc.top, tc.f, diff)
			}
		}
		if _, err := db.FlowSeries(ctx, base, base, "nope", 5, "", store.FlowFilter{}, nil); err == nil {
			t.Error("an unknown dimension is refused")
		}
	})
}
