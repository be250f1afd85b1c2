package reports

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"netmon/alerting/health"
	"netmon/app/compliance"
	"netmon/store"
)

// The seeded database of the builder's tests: a 3-day report ending
// 2026-11-27 (UTC) over two sites. Every figure the tests expect is
// computed by hand in the comments beside the rows.

// seedNow is when the reports are built; the range is 2026-11-24 00:00
// to 2026-11-27 00:00 UTC, the previous period 2026-11-21 to 11-24.
var seedNow = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

func seedAt(day, hour, minute int) int64 {
	return time.Date(2026, 11, day, hour, minute, 0, 0, time.UTC).Unix()
}

// seedAgents are the agents: name → site.
var seedAgents = []struct{ name, site string }{{"db-01", "north"}, {"web-02", "south"}, {"edge-03", "north"}}

func mustExec(t testing.TB, db *store.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Writer().ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// seed fills db and returns the agents' ids by name.
func seed(t *testing.T, db *store.DB) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	ids := map[string]int64{}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, a := range seedAgents {
			id, _, err := tx.CreateAgent(ctx, store.Agent{Name: a.name, Site: a.site, TokenHash: "h-" + a.name, EnrolledAt: 1})
			if err != nil {
				return err
			}
			ids[a.name] = id
		}
		for _, d := range []store.Device{{Name: "fw-north", Host: "10.0.0.1", Site: "north"}, {Name: "fw-south", Host: "10.0.0.2", Site: "south"}} {
			d.SNMPVersion, d.Profile, d.PollSeconds, d.Enabled = "2c", "auto", 60, true
			if _, err := tx.InsertDevice(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a1, a2 := ids["db-01"], ids["web-02"]

	// Hub capture (no site): 11-24 10:00 1e9 in, 2e8 out; 11-25 10:00 3e9
	// in, 1e9 out; previous period 11-22 1e9 in.
	for _, m := range [][3]int64{{seedAt(24, 10, 0), 1e9, 2e8}, {seedAt(25, 10, 0), 3e9, 1e9}, {seedAt(22, 10, 0), 1e9, 0}} {
		mustExec(t, db, `INSERT INTO traffic_minutes (ts, in_bytes, out_bytes, seconds) VALUES ($1, $2, $3, 60)`, m[0], m[1], m[2])
	}
	// Agents: db-01 (north) two samples in 11-24 12:00, mean rx 2e6 B/s
	// and tx 1e5 B/s: 1.2e8 and 6e6 bytes; a third sample without a rate
	// is left out. web-02 (south) 11-26 09:00 rx 5e6 B/s: 3e8 bytes.
	samples := []struct {
		agent, seq, ts int64
		rx, tx         float64
		rate           bool
	}{
		{a1, 1, seedAt(24, 12, 0), 1e6, 1e5, true},
		{a1, 2, seedAt(24, 12, 0) + 30, 3e6, 1e5, true},
		{a1, 3, seedAt(24, 13, 0), 9e9, 9e9, false},
		{a2, 1, seedAt(26, 9, 0), 5e6, 0, true},
	}
	for _, s := range samples {
		mustExec(t, db, `INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns) VALUES ($1, $2, $3, $4, $5, 0, 0, $6, 0)`,
			s.agent, s.seq, s.ts, s.rx, s.tx, s.rate)
	}

	// Flows (hourly rollup) on 11-24 10:00; exporter 10.0.0.1 is north's
	// device, 10.0.0.2 south's.
	flows := []struct {
		exp, src, dst string
		proto         int
		octets        int64
	}{
		{"10.0.0.1", "192.168.1.10", "1.1.1.1", 6, 9000},
		{"10.0.0.1", "192.168.1.10", "8.8.8.8", 17, 5000},
		{"10.0.0.1", "192.168.1.11", "8.8.8.8", 6, 3000},
		{"10.0.0.1", "", "", 6, 1000}, // the exporter's remainder row
		{"10.0.0.2", "10.1.1.1", "9.9.9.9", 6, 20000},
	}
	// 30 small south conversations to 203.0.113.i, i*10 octets each
	// (unknown to geo): 34 pairs in all, so the conversations table
	// leaves 9 out.
	for i := 1; i <= 30; i++ {
		flows = append(flows, struct {
			exp, src, dst string
			proto         int
			octets        int64
		}{"10.0.0.2", fmt.Sprintf("10.2.0.%d", i), fmt.Sprintf("203.0.113.%d", i), 17, int64(i * 10)})
	}
	for _, f := range flows {
		mustExec(t, db, `INSERT INTO flow_hours (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
			VALUES ($1, $2, $3, $4, 0, 0, $5, $6, $7, 1, $1, $1)`, seedAt(24, 10, 0), f.exp, f.src, f.dst, f.proto, f.octets/100, f.octets)
	}
	// Outside the range: not counted.
	mustExec(t, db, `INSERT INTO flow_hours (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
		VALUES ($1, '10.0.0.1', '192.168.1.10', '8.8.4.4', 0, 0, 6, 1, 99999, 1, $1, $1)`, seedAt(23, 10, 0))

	// Deep collection: db-01 12 processes p01..p12 (in i*1000, out i*10),
	// web-02 nginx (in 1e6, out 2e6); one row before the range.
	for i := 1; i <= 12; i++ {
		mustExec(t, db, `INSERT INTO agent_proc_minutes (agent_id, ts, process, pid, bytes_in, bytes_out) VALUES ($1, $2, $3, 1, $4, $5)`,
			a1, seedAt(24, 12, 0), fmt.Sprintf("p%02d", i), i*1000, i*10)
	}
	mustExec(t, db, `INSERT INTO agent_proc_minutes (agent_id, ts, process, pid, bytes_in, bytes_out) VALUES ($1, $2, 'nginx', 1, 1000000, 2000000)`, a2, seedAt(26, 9, 0))
	mustExec(t, db, `INSERT INTO agent_proc_minutes (agent_id, ts, process, pid, bytes_in, bytes_out) VALUES ($1, $2, 'old', 1, 9000000, 0)`, a1, seedAt(23, 9, 0))
	// backup sends far more than it receives: ranked by in + out, first.
	mustExec(t, db, `INSERT INTO agent_proc_minutes (agent_id, ts, process, pid, bytes_in, bytes_out) VALUES ($1, $2, 'backup', 2, 10, 5000000)`, a2, seedAt(26, 9, 0))
	for _, d := range []struct {
		agent, ts int64
		domain    string
		q, r      int64
	}{
		{a1, seedAt(24, 12, 0), "example.com", 3, 3}, {a1, seedAt(24, 12, 1), "example.com", 2, 1},
		{a1, seedAt(24, 12, 0), "b.test", 7, 7}, {a2, seedAt(26, 9, 0), "south.test", 100, 99},
	} {
		mustExec(t, db, `INSERT INTO agent_dns_minutes (agent_id, ts, domain, process, queries, responses) VALUES ($1, $2, $3, 'app', $4, $5)`,
			d.agent, d.ts, d.domain, d.q, d.r)
	}
	mustExec(t, db, `INSERT INTO agent_l7_minutes (agent_id, ts, host, kind, process, bytes, hits) VALUES ($1, $2, 'api.example.com', 'tls', 'app', 500, 5)`, a1, seedAt(24, 12, 0))
	mustExec(t, db, `INSERT INTO agent_l7_minutes (agent_id, ts, host, kind, process, bytes, hits) VALUES ($1, $2, 'shop.test', 'http', 'nginx', 7000, 2)`, a2, seedAt(26, 9, 0))

	// Alerts: north 3 port_scan on 10.9.9.9 (severity 8, two firing, one
	// acknowledged), south 1 new_device (severity 3); one before the range.
	for _, a := range []struct {
		ts              int64
		kind, key, site string
		sev             int
		state           string
	}{
		{seedAt(24, 1, 0), "port_scan", "10.9.9.9", "north", 8, "firing"},
		{seedAt(24, 2, 0), "port_scan", "10.9.9.9", "north", 8, "firing"},
		{seedAt(25, 2, 0), "port_scan", "10.9.9.9", "north", 8, "ack"},
		{seedAt(26, 3, 0), "new_device", "aa:bb", "south", 3, "firing"},
		{seedAt(20, 3, 0), "new_device", "old", "south", 3, "firing"},
	} {
		mustExec(t, db, `INSERT INTO alert_events (ts, kind, key, severity, state, site, count, last_ts) VALUES ($1, $2, $3, $4, $5, $6, 2, $1)`,
			a.ts, a.kind, a.key, a.sev, a.state, a.site)
	}
	for _, in := range []struct {
		key, site, state, title string
		sev                     int
	}{
		{"scan", "north", "open", "Port scan from 10.9.9.9", 9},
		{"dev", "south", "resolved", "New device", 3},
	} {
		mustExec(t, db, `INSERT INTO incidents (correlation_key, rule, site, state, severity, risk, title, opened_ts, updated_ts) VALUES ($1, 1, $2, $3, $4, 50, $5, $6, $6)`,
			in.key, in.site, in.state, in.sev, in.title, seedAt(24, 1, 0))
	}
	return ids
}

// fakeGeo places the seeded destinations.
type fakeGeo map[string][2]string

func (g fakeGeo) Lookup(a netip.Addr) (string, string, bool) {
	v, ok := g[a.String()]
	return v[0], v[1], ok
}

var seedGeo = fakeGeo{"8.8.8.8": {"US", "AS15169 Google"}, "1.1.1.1": {"AU", "AS13335 Cloudflare"}, "9.9.9.9": {"CH", "AS19281 Quad9"}}

// fakeSLA answers fixed figures and records the range asked.
type fakeSLA struct {
	f        SLAFigures
	site     string
	from, to time.Time
}

func (s *fakeSLA) Figures(_ context.Context, site string, from, to time.Time) (SLAFigures, error) {
	s.site, s.from, s.to = site, from, to
	return s.f, nil
}

type fakeHealth struct{ h health.NetworkHealth }

func (f fakeHealth) Score(context.Context, string) (health.NetworkHealth, error) { return f.h, nil }

type fakeISMS map[string][]compliance.Entry

func (f fakeISMS) List(_ context.Context, kind string) ([]compliance.Entry, error) {
	return f[kind], nil
}

type fakeLog struct{ st compliance.Status }

func (f fakeLog) Status(context.Context) (compliance.Status, error) { return f.st, nil }

type fakeAI []AIAnalysis

func (f fakeAI) LatestAnalyses(_ context.Context, _ string, _, _ time.Time, n int) ([]AIAnalysis, error) {
	return f[:min(n, len(f))], nil
}
