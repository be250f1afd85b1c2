package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/storetest"
)

// The report rollups (migration 0023): a rolled day answers every
// report read exactly as the live computation did, for whole-day and
// non-aligned windows, every site and one site; rolling twice writes
// nothing; a day with more than ReportRollupTopK keys keeps its top K and
// one remainder row holding the rest exactly.

// rollupDay0 is the first seeded UTC day (2026-11-01).
const rollupDay0 = 1_793_491_200

// seedRollup seeds three UTC days from rollupDay0: two agents of site n
// and one of site s (one enrolled mid-day 1), the hub capture, and flows
// of an exporter of each site with flow_hours remainder rows (src ”).
func seedRollup(t *testing.T, db *store.DB) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	ids := map[string]int64{}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, a := range []struct {
			name, site string
			enrolled   int64
		}{{"a1", "n", 1}, {"a2", "n", rollupDay0 + 86400 + 7*3600 + 30}, {"b1", "s", 1}} {
			id, _, err := tx.CreateAgent(ctx, store.Agent{Name: a.name, Site: a.site, TokenHash: "h-" + a.name, EnrolledAt: a.enrolled})
			if err != nil {
				return err
			}
			ids[a.name] = id
		}
		for i, site := range []string{"n", "s"} {
			if _, err := tx.InsertDevice(ctx, store.Device{Name: "rtr-" + site, Host: fmt.Sprintf("10.0.0.%d", i+1), Site: site,
				SNMPVersion: "2c", Profile: "auto", PollSeconds: 60, Enabled: true}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	w := db.Writer()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := w.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	seq := int64(0)
	for h := int64(0); h < 72; h++ {
		ts := rollupDay0 + h*3600
		for i, a := range []string{"a1", "a2", "b1"} {
			if a == "a2" && ts < rollupDay0+86400+7*3600 {
				continue
			}
			// Two samples in one minute (averaged), one without a rate
			// every 5th hour (a report, no traffic).
			seq++
			exec(`INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns) VALUES ($1, $2, $3, $4, $5, 0, 0, $6, 0)`,
				ids[a], seq, ts+int64(i)*60+5, 100*(h%7+1), 10*(i+1), h%5 != 0)
			seq++
			exec(`INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns) VALUES ($1, $2, $3, $4, $5, 0, 0, true, 0)`,
				ids[a], seq, ts+int64(i)*60+35, 300*(h%3+1), 20*(i+1))
		}
		exec(`INSERT INTO traffic_minutes (ts, in_bytes, out_bytes, packets) VALUES ($1, $2, $3, 0)`, ts+600, 1000*(h%11+1), 50*h)
		// The deep collection: 4 processes, names and hosts over the
		// agents (a key seen by one agent, then two, on other days).
		for i, a := range []string{"a1", "b1"} {
			for k := int64(0); k < 4; k++ {
				key := (h/24 + k + int64(i)) % 5
				exec(`INSERT INTO agent_proc_minutes (agent_id, ts, process, pid, bytes_in, bytes_out) VALUES ($1, $2, $3, 1, $4, $5)`,
					ids[a], ts+k*60, fmt.Sprintf("proc-%d", key), 100*(k+1)+h, 7*k)
				exec(`INSERT INTO agent_dns_minutes (agent_id, ts, domain, process, queries, responses) VALUES ($1, $2, $3, 'app', $4, $5)`,
					ids[a], ts+k*60, fmt.Sprintf("n%d.example", key), k+1+h%3, k)
				exec(`INSERT INTO agent_l7_minutes (agent_id, ts, host, kind, process, bytes, hits) VALUES ($1, $2, $3, $4, 'app', $5, $6)`,
					ids[a], ts+k*60, fmt.Sprintf("h%d.example", key), []string{"tls", "http"}[k%2], 1000*(k+1)+h, k+1)
			}
		}
		for e, exp := range []string{"10.0.0.1", "10.0.0.2"} {
			for k := int64(0); k < 4; k++ {
				exec(`INSERT INTO flow_hours (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
					VALUES ($1, $2, $3, $4, 0, 443, $5, $6, $7, 1, $1, $1)`,
					ts, exp, fmt.Sprintf("192.168.%d.%d", e, k), fmt.Sprintf("8.8.%d.%d", k%2, (h+k)%5), []int{6, 17, 1}[k%3], k+1, 1000*(k+1)+h*10+int64(e))
			}
			// The hourly rollup's own remainder row: in the protocols and
			// the totals, never in the conversations or destinations.
			exec(`INSERT INTO flow_hours (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
				VALUES ($1, $2, '', '', 0, 0, 6, 3, 777, 2, $1, $1)`, ts, exp)
		}
	}
	return ids
}

// reportReads is every rollup-backed read of a window.
type reportReads struct {
	Minutes       []store.ReportMinute
	Rx, Tx        float64
	Protocols     store.ReportTop
	Conversations store.ReportTop
	Destinations  store.ReportTop
	FlowTotal     int64
	Uptime        store.ReportTop
	SLAUptime     []store.AgentMinutes
	Processes     store.ReportTop
	DNS           store.ReportTop
	Applications  store.ReportTop
}

func readAll(t *testing.T, db *store.DB, s store.ReportScope) reportReads {
	t.Helper()
	ctx := context.Background()
	var r reportReads
	var err error
	check := func(e error) {
		t.Helper()
		if e != nil {
			t.Fatal(e)
		}
	}
	r.Minutes, err = db.ReportTrafficMinutes(ctx, s)
	check(err)
	r.Rx, r.Tx, err = db.ReportTrafficTotal(ctx, s)
	check(err)
	r.Protocols, err = db.ReportProtocols(ctx, s, 10)
	check(err)
	r.Conversations, err = db.ReportConversations(ctx, s, 5)
	check(err)
	r.Destinations, err = db.ReportDestinations(ctx, s, 5)
	check(err)
	r.FlowTotal, err = db.ReportFlowTotal(ctx, s)
	check(err)
	r.Uptime, err = db.ReportAgentUptime(ctx, s, 10)
	check(err)
	r.SLAUptime, err = db.AgentUptime(ctx, store.SLAScope{Site: s.Site}, s.From, s.To)
	check(err)
	r.Processes, err = db.ReportProcesses(ctx, s, 3)
	check(err)
	r.DNS, err = db.ReportDNS(ctx, s, 3)
	check(err)
	r.Applications, err = db.ReportApplications(ctx, s, 3)
	check(err)
	return r
}

func TestReportRollupEqualsLive(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ids := seedRollup(t, db)
		windows := []store.ReportScope{
			{From: rollupDay0, To: rollupDay0 + 3*86400},                   // whole days
			{From: rollupDay0 + 5*3600, To: rollupDay0 + 2*86400 + 7*3600}, // partial edges (a report zone east of UTC)
			{From: rollupDay0, To: rollupDay0 + 3*86400, Site: "n"},        // one site
			{From: rollupDay0 + 86400 + 3600, To: rollupDay0 + 3*86400, Site: "s"},
			{From: rollupDay0 + 86400, To: rollupDay0 + 2*86400, Site: "n"}, // the enrolment day of a2
		}
		live := make([]reportReads, len(windows))
		for i, s := range windows {
			live[i] = readAll(t, db, s)
		}
		// The seed must give the comparison something to compare: 4
		// minutes an hour (3 agents, the capture) less a2's 31 hours
		// before its enrolment; 8 sources × 5 destinations.
		if len(live[0].Minutes) != 72*4-31 || live[0].Conversations.Total != 40 || live[0].FlowTotal == 0 || live[0].Processes.Total != 5 {
			t.Fatalf("seed: %d minutes, %d conversations, %d octets", len(live[0].Minutes), live[0].Conversations.Total, live[0].FlowTotal)
		}
		// Days 0 and 1 closed (day 2 ends at now - grace: still open).
		now := int64(rollupDay0 + 3*86400 + store.ReportRollupGrace - 1)
		pending, err := db.ReportRollupPending(ctx, now, 10)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]int64{rollupDay0 + 86400, rollupDay0}, pending); d != "" {
			t.Fatalf("pending (-want +got):\n%s", d)
		}
		for _, d := range pending {
			if ok, err := db.RollupReportDay(ctx, d, now); err != nil || !ok {
				t.Fatalf("rollup %d: %v %v", d, ok, err)
			}
		}
		counts := rollupCounts(t, db)
		if counts["report_rollup_days"] != 2 || counts["report_flow_rollup"] == 0 || counts["report_traffic_rollup"] == 0 || counts["report_agent_rollup"] == 0 {
			t.Fatalf("rollup rows: %v", counts)
		}
		// The rollup tables now answer for days 0 and 1, the rest live.
		for i, s := range windows {
			if d := cmp.Diff(live[i], readAll(t, db, s)); d != "" {
				t.Errorf("window %d %+v (-live +rolled):\n%s", i, s, d)
			}
		}
		// Idempotence: a second pass finds nothing pending and a second
		// rollup of a day writes nothing.
		pending, err = db.ReportRollupPending(ctx, now, 10)
		if err != nil || len(pending) != 0 {
			t.Fatalf("pending after rollup: %v %v", pending, err)
		}
		if ok, err := db.RollupReportDay(ctx, rollupDay0, now); err != nil || ok {
			t.Fatalf("second rollup: %v %v", ok, err)
		}
		if d := cmp.Diff(counts, rollupCounts(t, db)); d != "" {
			t.Errorf("rows after a second rollup (-first +second):\n%s", d)
		}
		// Proof the rolled days are read from the rollup (and the rule
		// that a day is rolled once): rows arriving late for day 0 change
		// nothing in a window made of rolled days.
		for _, q := range []string{
			`INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns) VALUES (` + fmt.Sprint(ids["a1"]) + `, 100000, ` + fmt.Sprint(rollupDay0+1800) + `, 5, 5, 0, 0, true, 0)`,
			`INSERT INTO traffic_minutes (ts, in_bytes, out_bytes, packets) VALUES (` + fmt.Sprint(rollupDay0+1800) + `, 9, 9, 0)`,
			`INSERT INTO flow_hours (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
				VALUES (` + fmt.Sprint(rollupDay0) + `, '10.0.0.1', '192.168.9.9', '1.1.1.1', 0, 0, 6, 1, 999999, 1, 0, 0)`,
		} {
			if _, err := db.Writer().ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if d := cmp.Diff(live[0], readAll(t, db, windows[0])); d != "" {
			t.Errorf("whole days after late rows for day 0 (-live +rolled):\n%s", d)
		}
	})
}

func rollupCounts(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tb := range store.ReportRollupTables {
		var n int
		if err := db.Reader().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM `+tb).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[tb] = n
	}
	return out
}

// TestReportRollupRemainder: a day with ReportRollupTopK+2 destinations
// keeps the K busiest and one remainder row with the two smallest's
// exact sums; the totals stay exact and the top 5 equals the live one.
func TestReportRollupRemainder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const keys = store.ReportRollupTopK + 2
		tx, err := db.Writer().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := range keys {
			// Destination k has k+1 octets: the two smallest are 1 and 2.
			if _, err := tx.ExecContext(ctx, `INSERT INTO flow_hours (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
				VALUES ($1, 'x', '10.1.1.1', $2, 0, 0, 6, 1, $3, 1, $1, $1)`, rollupDay0+3600, fmt.Sprintf("203.0.%d.%d", k/256, k%256), k+1); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		s := store.ReportScope{From: rollupDay0, To: rollupDay0 + 86400}
		liveTop, err := db.ReportDestinations(ctx, s, 5)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := db.RollupReportDay(ctx, rollupDay0, rollupDay0+2*86400); err != nil || !ok {
			t.Fatalf("rollup: %v %v", ok, err)
		}
		var n, other, packets, flows int64
		if err := db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM report_flow_rollup WHERE scope = '' AND kind = 'd' AND k1 <> ''`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := db.Reader().QueryRowContext(ctx, `SELECT octets, packets, flows FROM report_flow_rollup WHERE scope = '' AND kind = 'd' AND k1 = ''`).Scan(&other, &packets, &flows); err != nil {
			t.Fatal(err)
		}
		if n != store.ReportRollupTopK || other != 1+2 || packets != 2 || flows != 2 {
			t.Errorf("kept %d keys, remainder %d octets %d packets %d flows; want %d, 3, 2, 2", n, other, packets, flows, store.ReportRollupTopK)
		}
		got, err := db.ReportDestinations(ctx, s, 5)
		if err != nil {
			t.Fatal(err)
		}
		// The top rows are exact; the count of groups is the keys kept,
		// flagged as a lower bound (AtLeast).
		if d := cmp.Diff(liveTop.Rows, got.Rows); d != "" {
			t.Errorf("top 5 (-live +rolled):\n%s", d)
		}
		if liveTop.Total != keys || got.Total != store.ReportRollupTopK || liveTop.AtLeast || !got.AtLeast {
			t.Errorf("groups: live %d (at least: %v) rolled %d (%v); want %d exact, %d at least",
				liveTop.Total, liveTop.AtLeast, got.Total, got.AtLeast, keys, store.ReportRollupTopK)
		}
		// The conversations of the day were cut too; its protocols (one)
		// were not.
		if c, err := db.ReportConversations(ctx, s, 5); err != nil || !c.AtLeast {
			t.Errorf("conversations at least: %v %v", c.AtLeast, err)
		}
		if p, err := db.ReportProtocols(ctx, s, 5); err != nil || p.AtLeast || p.Total != 1 {
			t.Errorf("protocols: %+v %v", p, err)
		}
		total, err := db.ReportFlowTotal(ctx, s)
		if want := int64(keys * (keys + 1) / 2); err != nil || total != want {
			t.Errorf("flow total %d %v; want %d", total, err, want)
		}
	})
}
