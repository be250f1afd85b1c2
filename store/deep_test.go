package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

func siteAgent(t *testing.T, db *store.DB, name, site string) int64 {
	t.Helper()
	var id int64
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		id, _, err = tx.CreateAgent(context.Background(), store.Agent{Name: name, Site: site, TokenHash: "h-" + name, EnrolledAt: 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// hostile is a process name, SNI and DNS name an agent may send: markup,
// quotes, a NUL and an invalid UTF-8 byte. It must be stored and read back
// as text (the NUL and the invalid byte as U+FFFD), never refused.
const hostile = "<script>alert('x')</script>\"\x00\xff"

const hostileStored = "<script>alert('x')</script>\"\ufffd\ufffd"

// TestDeepSums: per-process, L7 and DNS sums are exact over batches and
// agents, agent_count counts distinct agents, a replayed batch (same
// agent and seq, in the same write or a later one) adds once, the site
// scope and the agent filter hold, and hostile names are stored as text.
func TestDeepSums(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a := siteAgent(t, db, "a", "north")
		b := siteAgent(t, db, "b", "south")
		now := time.Now().Unix()
		now -= now % 60
		batch := func(agent int64, seq uint64, ts int64, curlIn uint64) record.Deep {
			return record.Deep{AgentID: agent, Seq: seq, TS: ts,
				Processes: []record.ProcessBytes{
					{Process: "curl", PID: 10, BytesIn: curlIn, BytesOut: 10},
					{Process: "curl", PID: 11, BytesIn: 1, BytesOut: 1},
					{Process: "(unattributed)", BytesIn: 5},
					{Process: hostile, PID: 7, BytesOut: 3},
				},
				L7:           []record.L7Hit{{Host: "example.com", Kind: "tls", Process: "curl", Bytes: 500, Hits: 1}, {Host: hostile, Kind: "http", Process: "curl", Bytes: 1, Hits: 1}},
				DNS:          []record.DNSCount{{Domain: "example.com", Process: "curl", Queries: 2, Responses: 2}},
				Remotes:      []record.RemoteBytes{{Process: "curl", Proto: "tcp", IP: "192.0.2.1", Port: 443, BytesIn: curlIn, BytesOut: 10}},
				Unattributed: []record.ReasonBytes{{Reason: "socket not found", Bytes: 3, Packets: 1}, {Reason: "kernel socket", Bytes: 2, Packets: 1}},
			}
		}
		writes := [][]record.Deep{
			{batch(a, 1, now, 100), batch(a, 2, now+30, 200), batch(a, 1, now, 100)}, // a repeat within a write
			{batch(a, 2, now+30, 200), batch(b, 1, now-120, 1000)},                   // a replay in a later write
		}
		for _, w := range writes {
			if n, err := db.WriteDeep(ctx, w); err != nil || n != len(w) {
				t.Fatalf("WriteDeep: %d, %v", n, err)
			}
		}
		all := store.DeepScope{From: now - 3600}
		procs, err := db.TopProcesses(ctx, all, 20)
		if err != nil {
			t.Fatal(err)
		}
		want := []store.ProcessItem{
			{Process: "curl", BytesIn: 100 + 200 + 1000 + 3, BytesOut: 30 + 3, Total: 1336, AgentCount: 2},
			{Process: "(unattributed)", BytesIn: 15, Total: 15, AgentCount: 2},
			{Process: hostileStored, BytesOut: 9, Total: 9, AgentCount: 2},
		}
		if diff := cmp.Diff(procs, want); diff != "" {
			t.Errorf("TopProcesses (-got, +want):\n%s", diff)
		}
		north, err := db.TopProcesses(ctx, store.DeepScope{From: now - 3600, Site: "north"}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(north, []store.ProcessItem{{Process: "curl", BytesIn: 302, BytesOut: 22, Total: 324, AgentCount: 1}}); diff != "" {
			t.Errorf("site north, limit 1 (-got, +want):\n%s", diff)
		}
		onlyB, _ := db.TopProcesses(ctx, store.DeepScope{From: now - 3600, AgentID: b, Site: "north"}, 20)
		if len(onlyB) != 0 {
			t.Errorf("agent of another site through agent_id: %+v", onlyB)
		}
		recent, _ := db.TopProcesses(ctx, store.DeepScope{From: now, AgentID: b}, 20)
		if len(recent) != 0 {
			t.Errorf("b's rows are two minutes old, window is this minute: %+v", recent)
		}

		l7, err := db.TopL7(ctx, all, 30)
		if err != nil {
			t.Fatal(err)
		}
		wantL7 := []store.L7Item{
			{Host: "example.com", Kind: "tls", Process: "curl", Bytes: 1500, Hits: 3, AgentCount: 2},
			{Host: hostileStored, Kind: "http", Process: "curl", Bytes: 3, Hits: 3, AgentCount: 2},
		}
		if diff := cmp.Diff(l7, wantL7); diff != "" {
			t.Errorf("TopL7 (-got, +want):\n%s", diff)
		}
		dns, err := db.TopDNS(ctx, store.DeepScope{From: now - 3600, Site: "south"}, 30)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(dns, []store.DNSItem{{Domain: "example.com", Process: "curl", Queries: 2, Responses: 2, AgentCount: 1}}); diff != "" {
			t.Errorf("TopDNS south (-got, +want):\n%s", diff)
		}

		ms, err := db.ProcessMinutes(ctx, a, "curl", now-3600)
		if err != nil {
			t.Fatal(err)
		}
		wantMs := []store.ProcessMinute{{TS: now, PID: 10, BytesIn: 300, BytesOut: 20}, {TS: now, PID: 11, BytesIn: 2, BytesOut: 2}}
		if diff := cmp.Diff(ms, wantMs); diff != "" {
			t.Errorf("ProcessMinutes (-got, +want):\n%s", diff)
		}
		dests, err := db.ProcessDestinations(ctx, a, "curl", now-3600)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(dests, []store.ProcessDestination{{RemoteIP: "192.0.2.1", RemotePort: 443, Proto: "tcp", BytesIn: 300, BytesOut: 20, FirstSeen: now, LastSeen: now}}); diff != "" {
			t.Errorf("ProcessDestinations (-got, +want):\n%s", diff)
		}
		reasons, err := db.UnattributedReasons(ctx, a, now-3600)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(reasons, []store.UnattributedReason{{Reason: "socket not found", Bytes: 6, Packets: 2}, {Reason: "kernel socket", Bytes: 4, Packets: 2}}); diff != "" {
			t.Errorf("UnattributedReasons (-got, +want):\n%s", diff)
		}
		names, err := db.ProcessNames(ctx, a, "curl", now-3600)
		if err != nil {
			t.Fatal(err)
		}
		wantNames := []store.ProcessName{
			{Kind: "dns", Name: "example.com", Count: 4, Answers: 4, FirstSeen: now, LastSeen: now},
			{Kind: "tls", Name: "example.com", Count: 2, Bytes: 1000, FirstSeen: now, LastSeen: now},
			{Kind: "http", Name: hostileStored, Count: 2, Bytes: 2, FirstSeen: now, LastSeen: now},
		}
		if diff := cmp.Diff(names, wantNames); diff != "" {
			t.Errorf("ProcessNames (-got, +want):\n%s", diff)
		}

		// A deleted agent's rows go with it, and its late batches vanish;
		// a process only it ran leaves the list.
		c := siteAgent(t, db, "c", "south")
		if _, err := db.WriteDeep(ctx, []record.Deep{{AgentID: c, Seq: 1, TS: now, Processes: []record.ProcessBytes{{Process: "only-c", BytesIn: 1 << 40}}}}); err != nil {
			t.Fatal(err)
		}
		if top, _ := db.TopProcesses(ctx, all, 1); len(top) != 1 || top[0].Process != "only-c" {
			t.Fatalf("c's process not on top: %+v", top)
		}
		for _, id := range []int64{b, c} {
			if err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.DeleteAgent(ctx, id); return err }); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.WriteDeep(ctx, []record.Deep{batch(b, 2, now, 1)}); err != nil {
			t.Fatalf("a deleted agent's batch: %v", err)
		}
		procs, _ = db.TopProcesses(ctx, all, 1)
		if diff := cmp.Diff(procs, []store.ProcessItem{{Process: "curl", BytesIn: 302, BytesOut: 22, Total: 324, AgentCount: 1}}); diff != "" {
			t.Errorf("after deleting b (-got, +want):\n%s", diff)
		}
		l7, _ = db.TopL7(ctx, all, 30)
		wantL7 = []store.L7Item{
			{Host: "example.com", Kind: "tls", Process: "curl", Bytes: 1000, Hits: 2, AgentCount: 1},
			{Host: hostileStored, Kind: "http", Process: "curl", Bytes: 2, Hits: 2, AgentCount: 1},
		}
		if diff := cmp.Diff(l7, wantL7); diff != "" {
			t.Errorf("TopL7 after deleting b (-got, +want):\n%s", diff)
		}
		dns, _ = db.TopDNS(ctx, all, 30)
		if diff := cmp.Diff(dns, []store.DNSItem{{Domain: "example.com", Process: "curl", Queries: 4, Responses: 4, AgentCount: 1}}); diff != "" {
			t.Errorf("TopDNS after deleting b (-got, +want):\n%s", diff)
		}
		if dns, _ := db.TopDNS(ctx, store.DeepScope{From: now - 3600, Site: "south"}, 30); len(dns) != 0 {
			t.Errorf("site south after deleting its agents: %+v", dns)
		}
	})
}

// TestDeepEvents: the agent observation types page through the cursor
// without skipping or repeating, newest minute first.
func TestDeepEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a := siteAgent(t, db, "a", "")
		now := time.Now().Unix()
		now -= now % 60
		var ds []record.Deep
		for i := range 3 {
			ds = append(ds, record.Deep{AgentID: a, Seq: uint64(i + 1), TS: now - int64(i)*60,
				DNS: []record.DNSCount{{Domain: "a.example", Process: "curl", Queries: 1}, {Domain: "b.example", Process: "curl", Queries: 1}},
				L7:  []record.L7Hit{{Host: "a.example", Kind: "tls", Process: "curl", Hits: 1}, {Host: "h.example", Kind: "http", Process: "wget", Hits: 1}}})
		}
		if _, err := db.WriteDeep(ctx, ds); err != nil {
			t.Fatal(err)
		}
		scope := store.DeepScope{From: now - 3600}
		var got []string
		var after *store.EventCursor
		for range 10 {
			page, err := db.DeepEvents(ctx, "dns.query", scope, store.EventFilter{}, after, 4)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page {
				got = append(got, e.Data["domain"].(string)+"@"+time.Unix(e.TS, 0).UTC().Format("04"))
			}
			if len(page) < 4 {
				break
			}
			last := page[len(page)-1]
			after = &store.EventCursor{TS: last.TS, Type: last.Type, Key: last.Key}
		}
		m := func(i int) string { return time.Unix(now-int64(i)*60, 0).UTC().Format("04") }
		want := []string{"b.example@" + m(0), "a.example@" + m(0), "b.example@" + m(1), "a.example@" + m(1), "b.example@" + m(2), "a.example@" + m(2)}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("dns.query pages (-got, +want):\n%s", diff)
		}
		for typ, host := range map[string]string{"tls.sni_observed": "a.example", "http.host_observed": "h.example"} {
			es, err := db.DeepEvents(ctx, typ, scope, store.EventFilter{}, nil, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 3 || es[0].Data["host"] != host || es[0].AgentID != a {
				t.Errorf("%s: %+v", typ, es)
			}
		}
	})
}

// TestDeepRetention: the deep tables are pruned like the other per-minute
// tables once registered.
func TestDeepRetention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a := siteAgent(t, db, "a", "")
		old := time.Now().Add(-8 * 24 * time.Hour).Unix()
		row := func(seq uint64, ts int64, p string) record.Deep {
			return record.Deep{AgentID: a, Seq: seq, TS: ts, Processes: []record.ProcessBytes{{Process: p, BytesIn: 1}},
				L7: []record.L7Hit{{Host: "h", Kind: "tls", Process: p}}, DNS: []record.DNSCount{{Domain: "d", Process: p}},
				Remotes:      []record.RemoteBytes{{Process: p, Proto: "tcp", IP: "192.0.2.1", Port: 1, BytesIn: 1}},
				Unattributed: []record.ReasonBytes{{Reason: "r", Bytes: 1}}}
		}
		// The last-report rows of "gone" are old and go; those of "p",
		// reported again lately, stay.
		old1, old2, recent := row(1, old, "gone"), row(2, old, "p"), row(3, time.Now().Unix(), "p")
		if _, err := db.WriteDeep(ctx, []record.Deep{old1, old2, recent}); err != nil {
			t.Fatal(err)
		}
		r := store.NewRetention(storetest.Logger(t), store.RetentionConfig{Hours: 168, Interval: time.Hour}, db, nil)
		for _, table := range store.DeepTables {
			if err := r.Register(table, "ts"); err != nil {
				t.Fatal(err)
			}
		}
		got, err := r.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{}
		for _, table := range store.DeepTables {
			want[table] = 2 // the two old batches' rows, at different keys
			if strings.HasSuffix(table, "_last") {
				want[table] = 1 // "gone" only
			}
		}
		want["agent_deep_seqs"] = 2
		want["agent_unattributed_minutes"], want["proc_site_minutes"], want["l7_site_minutes"], want["dns_site_minutes"] = 1, 2, 2, 2
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("deleted (-got, +want):\n%s", diff)
		}
		for _, table := range store.DeepTables {
			if n := countRows(t, db, table); n != 1 {
				t.Errorf("%s keeps %d rows, want 1", table, n)
			}
		}
	})
}
