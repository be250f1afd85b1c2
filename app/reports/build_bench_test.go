package reports

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"netmon/app/reports/model"
	"netmon/app/reports/render"
	"netmon/store"
	"netmon/store/storetest"
)

// The figure: a 30-day enterprise report over 1 000 agents and
// 10^6 flow rows builds (and renders) within a second; a 90-day traffic
// report within 5 s. The seeded database (SQLite) is cached in the temp
// directory under a name holding its cardinality, so a rerun does not
// seed again:
//
//	go test ./app/reports -run '^$' -bench BuildEnterprise30d -benchmem
//
// Cardinality (env overrides in brackets):
//   - 1 000 agents in 10 sites, each with a rate sample every
//     benchSampleMin minutes [NETMON_BENCH_SAMPLE_MIN, default 5] over
//     the 90 days, and each hour 5 processes, 5 DNS names and 2 TLS names
//     (agent_*_minutes: 3 × 5 × 1 000 × 2 160 rows... scaled by
//     NETMON_BENCH_DEEP_HOURS, default every 6th hour);
//   - the hub capture's 129 600 minutes (90 days);
//   - 10^6 flow_hours rows over the last 30 days, 200 exporters, 20 000
//     sources, 50 000 destinations;
//   - 20 000 alert events and 200 incidents.

const benchDays = 90

func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchNow ends the seeded range.
var benchNow = time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)

// benchDB opens (seeding when absent) the cached benchmark database.
func benchDB(b *testing.B) *store.DB {
	b.Helper()
	sampleMin := benchEnv("NETMON_BENCH_SAMPLE_MIN", 60)
	deepHours := benchEnv("NETMON_BENCH_DEEP_HOURS", 24)
	flows := benchEnv("NETMON_BENCH_FLOWS", 1_000_000)
	path := filepath.Join(os.TempDir(), fmt.Sprintf("netmon-report-bench-v2-s%d-d%d-f%d.db", sampleMin, deepHours, flows))
	if benchEnv("NETMON_BENCH_ROLLUP", 1) != 1 {
		// The live reads only (the figures before the rollups): a copy
		// of the database without rollup rows.
		path = strings.TrimSuffix(path, ".db") + "-norollup.db"
	}
	_, statErr := os.Stat(path)
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Logger(b), store.Config{DSN: path, MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	if statErr != nil {
		start := time.Now()
		if err := benchSeed(ctx, db, sampleMin, deepHours, flows); err != nil {
			_ = os.Remove(path)
			b.Fatal(err)
		}
		b.Logf("seeded %s in %v", path, time.Since(start).Round(time.Second))
	}
	benchRollup(b, db)
	return db
}

// benchRollup rolls up every closed day of the seeded range, as the
// rollup job does, untimed (NETMON_BENCH_ROLLUP=2 skips it: the live
// reads' figures); a day rolled up already is not rolled again.
func benchRollup(b *testing.B, db *store.DB) {
	b.Helper()
	if benchEnv("NETMON_BENCH_ROLLUP", 1) != 1 {
		return
	}
	start := time.Now()
	r := NewRollup(nil, RollupConfig{MaxDays: 200}, db, func() time.Time { return benchNow }, nil)
	n, err := r.RunOnce(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if n > 0 {
		b.Logf("rolled up %d days in %v", n, time.Since(start).Round(time.Second))
	}
}

// bulk runs rows inserts of q in one transaction.
func bulk(ctx context.Context, w *sql.DB, q string, rows int, arg func(i int) []any) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	st, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	for i := range rows {
		if _, err := st.ExecContext(ctx, arg(i)...); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return tx.Commit()
}

func benchSeed(ctx context.Context, db *store.DB, sampleMin, deepHours, flows int) error {
	const agents = 1000
	end := time.Date(benchNow.Year(), benchNow.Month(), benchNow.Day(), 0, 0, 0, 0, time.UTC).Unix()
	start := end - benchDays*86400
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i := range agents {
			if _, _, err := tx.CreateAgent(ctx, store.Agent{Name: fmt.Sprintf("agent-%04d", i), Site: fmt.Sprintf("site-%d", i%10),
				TokenHash: fmt.Sprintf("bench-%d", i), EnrolledAt: 1}); err != nil {
				return err
			}
		}
		for i := range 200 {
			if _, err := tx.InsertDevice(ctx, store.Device{Name: fmt.Sprintf("rtr-%d", i), Host: fmt.Sprintf("10.255.%d.%d", i/250, i%250+1),
				Site: fmt.Sprintf("site-%d", i%10), SNMPVersion: "2c", Profile: "auto", PollSeconds: 60, Enabled: true}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	w := db.Writer()
	minutes := benchDays * 1440
	if err := bulk(ctx, w, `INSERT INTO traffic_minutes (ts, in_bytes, out_bytes, seconds) VALUES ($1, $2, $3, 60)`, minutes, func(i int) []any {
		return []any{start + int64(i)*60, int64(1e8 + (i%1440)*1e5), int64(2e7 + (i%97)*1e4)}
	}); err != nil {
		return err
	}
	per := benchDays * 1440 / sampleMin
	if err := bulk(ctx, w, `INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns) VALUES ($1, $2, $3, $4, $5, 0, 0, TRUE, 0)`,
		agents*per, func(i int) []any {
			a, k := i%agents, i/agents
			return []any{a + 1, k, start + int64(k*sampleMin*60) + int64(a%60), float64(1e4 + a*10 + k%50), float64(5e3 + k%30)}
		}); err != nil {
		return err
	}
	hours := benchDays * 24 / deepHours
	for _, t := range []struct{ q, key string }{
		{`INSERT INTO agent_proc_minutes (agent_id, ts, process, pid, bytes_in, bytes_out) VALUES ($1, $2, $3, 1, $4, $5)`, "proc-%d"},
		{`INSERT INTO agent_dns_minutes (agent_id, ts, domain, process, queries, responses) VALUES ($1, $2, $3, 'app', $4, $5)`, "name%d.example.com"},
		{`INSERT INTO agent_l7_minutes (agent_id, ts, host, kind, process, bytes, hits) VALUES ($1, $2, $3, 'tls', 'app', $4, $5)`, "sni%d.example.net"},
	} {
		if err := bulk(ctx, w, t.q, agents*hours*5, func(i int) []any {
			a, h, n := i%agents, (i/agents)%hours, i/(agents*hours)
			return []any{a + 1, start + int64(h*deepHours*3600), fmt.Sprintf(t.key, (a*7+n)%300), int64(1000 + a + n), int64(10 + n)}
		}); err != nil {
			return err
		}
	}
	fstart := end - 30*86400
	if err := db.EnsureFlowDays(ctx, fstart, end); err != nil {
		return err
	}
	// flow_hours rows spread over the 720 hours, inserted into each day's
	// table (SQLite) as the rollup writes them.
	perHour := flows / 720
	for d := range 30 {
		day := fstart + int64(d)*86400
		q := `INSERT INTO ` + store.FlowDayTable("flow_hours", day) + ` (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
			VALUES ($1, $2, $3, $4, 0, 443, $5, $6, $7, 1, $1, $1)`
		if err := bulk(ctx, w, q, perHour*24, func(i int) []any {
			h, k := i/perHour, i%perHour+d*24*perHour
			ts := day + int64(h)*3600
			proto := 6
			if k%5 == 0 {
				proto = 17
			}
			return []any{ts, fmt.Sprintf("10.255.%d.%d", (k%200)/250, (k%200)%250+1), fmt.Sprintf("192.168.%d.%d", (k/200)%80, k%250),
				fmt.Sprintf("203.%d.%d.%d", k%200, (k/7)%250, k%251), proto, int64(10 + k%100), int64(1000 + (k*7919)%100000)}
		}); err != nil {
			return err
		}
	}
	kinds := []string{"port_scan", "new_device", "bandwidth", "dns_tunnel", "ioc"}
	if err := bulk(ctx, w, `INSERT INTO alert_events (ts, kind, key, severity, state, site, count, last_ts) VALUES ($1, $2, $3, $4, $5, $6, 1, $1)`, 20000, func(i int) []any {
		state := "resolved"
		if i%10 == 0 {
			state = "firing"
		}
		return []any{start + int64(i)*(benchDays*86400/20000), kinds[i%5], fmt.Sprintf("key-%d", i%500), i % 11, state, fmt.Sprintf("site-%d", i%10)}
	}); err != nil {
		return err
	}
	return bulk(ctx, w, `INSERT INTO incidents (correlation_key, rule, site, state, severity, risk, title, opened_ts, updated_ts) VALUES ($1, 1, $2, $3, $4, 50, $5, $6, $6)`, 200, func(i int) []any {
		state := "closed"
		if i%4 == 0 {
			state = "open"
		}
		return []any{fmt.Sprintf("c-%d", i), fmt.Sprintf("site-%d", i%10), state, i % 11, fmt.Sprintf("Incident %d", i), start + int64(i)*3600}
	})
}

// benchBuild builds (and renders, once the renderers exist) the report
// b.N times and reports the peak heap of one build.
func benchBuild(b *testing.B, typ string, days int) { benchBuildOn(b, benchDB(b), typ, days) }

func benchBuildOn(b *testing.B, db *store.DB, typ string, days int) {
	bld := NewBuilder(BuildDeps{Traffic: db, Flows: db, Deep: db, Alerts: db, Geo: seedGeo,
		SLA: &fakeSLA{f: badSLA}, Health: fakeHealth{lowHealth}})
	ctx := context.Background()
	req := Request{Type: typ, Days: days, Now: benchNow}
	var buf bytes.Buffer
	rendered := true
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		r, err := bld.Build(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if rendered {
			buf.Reset()
			if err := render.HTML(&buf, r); err != nil {
				rendered = false // the renderers are another helper's: build only until they land
			}
		}
		if len(r.Sections) == 0 || r.Type != typ {
			b.Fatalf("report %q with %d sections", r.Type, len(r.Sections))
		}
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapSys-before.HeapSys)/1e6, "heap-growth-MB")
	if !rendered {
		b.Log("render.HTML is a placeholder: build only")
	}
}

func BenchmarkBuildEnterprise30d(b *testing.B) { benchBuild(b, model.TypeEnterprise, 30) }

func BenchmarkBuildTraffic90d(b *testing.B) { benchBuild(b, model.TypeTraffic, 90) }

// benchPG seeds a fresh PostgreSQL schema with the same cardinality as
// benchSeed, server-side (generate_series), so seeding takes seconds.
func benchPG(b *testing.B) *store.DB {
	b.Helper()
	db := storetest.OpenPostgres(b)
	ctx := context.Background()
	sampleMin := benchEnv("NETMON_BENCH_SAMPLE_MIN", 60)
	deepHours := benchEnv("NETMON_BENCH_DEEP_HOURS", 24)
	flows := benchEnv("NETMON_BENCH_FLOWS", 1_000_000)
	end := time.Date(benchNow.Year(), benchNow.Month(), benchNow.Day(), 0, 0, 0, 0, time.UTC).Unix()
	start := end - benchDays*86400
	fstart := end - 30*86400
	if err := db.EnsureFlowDays(ctx, fstart, end); err != nil {
		b.Fatal(err)
	}
	perHour := flows / 720
	stmts := []string{
		`INSERT INTO agents (name, site, token_hash, enrolled_at) SELECT 'agent-' || lpad(i::text, 4, '0'), 'site-' || (i % 10), 'bench-' || i, 1 FROM generate_series(0, 999) i ORDER BY i`,
		`INSERT INTO devices (name, host, site, created_at) SELECT 'rtr-' || i, '10.255.0.' || (i + 1), 'site-' || (i % 10), 1 FROM generate_series(0, 199) i`,
		fmt.Sprintf(`INSERT INTO traffic_minutes (ts, in_bytes, out_bytes, seconds) SELECT %d + i * 60, 100000000 + (i %% 1440) * 100000, 20000000 + (i %% 97) * 10000, 60 FROM generate_series(0, %d) i`, start, benchDays*1440-1),
		fmt.Sprintf(`INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns)
			SELECT a, k, %d + k * %d + (a - 1) %% 60, 10000 + (a - 1) * 10 + k %% 50, 5000 + k %% 30, 0, 0, TRUE, 0 FROM generate_series(1, 1000) a, generate_series(0, %d) k`,
			start, sampleMin*60, benchDays*1440/sampleMin-1),
		fmt.Sprintf(`INSERT INTO agent_proc_minutes (agent_id, ts, process, pid, bytes_in, bytes_out)
			SELECT a, %d + h * %d, 'proc-' || (((a - 1) * 7 + n) %% 300), n, 1000 + a + n, 10 + n FROM generate_series(1, 1000) a, generate_series(0, %d) h, generate_series(0, 4) n`,
			start, deepHours*3600, benchDays*24/deepHours-1),
		fmt.Sprintf(`INSERT INTO agent_dns_minutes (agent_id, ts, domain, process, queries, responses)
			SELECT a, %d + h * %d, 'name' || (((a - 1) * 7 + n) %% 300) || '.example.com', 'app', 1000 + a + n, 10 + n FROM generate_series(1, 1000) a, generate_series(0, %d) h, generate_series(0, 4) n`,
			start, deepHours*3600, benchDays*24/deepHours-1),
		fmt.Sprintf(`INSERT INTO agent_l7_minutes (agent_id, ts, host, kind, process, bytes, hits)
			SELECT a, %d + h * %d, 'sni' || (((a - 1) * 7 + n) %% 300) || '.example.net', 'tls', 'app', 1000 + a + n, 10 + n FROM generate_series(1, 1000) a, generate_series(0, %d) h, generate_series(0, 4) n`,
			start, deepHours*3600, benchDays*24/deepHours-1),
		fmt.Sprintf(`INSERT INTO flow_hours (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
			SELECT %d + (k / %d) * 3600, '10.255.0.' || (k %% 200 + 1), '192.168.' || ((k / 200) %% 80) || '.' || (k %% 250),
				'203.' || (k %% 200) || '.' || ((k / 7) %% 250) || '.' || (k %% 251), 0, 443, CASE WHEN k %% 5 = 0 THEN 17 ELSE 6 END,
				10 + k %% 100, 1000 + (k::bigint * 7919) %% 100000, 1, %d, %d FROM generate_series(0, %d) k`,
			fstart, perHour, fstart, fstart, perHour*720-1),
		fmt.Sprintf(`INSERT INTO alert_events (ts, kind, key, severity, state, site, count, last_ts)
			SELECT %d + i * %d, (ARRAY['port_scan','new_device','bandwidth','dns_tunnel','ioc'])[i %% 5 + 1], 'key-' || (i %% 500), i %% 11,
				CASE WHEN i %% 10 = 0 THEN 'firing' ELSE 'resolved' END, 'site-' || (i %% 10), 1, %d FROM generate_series(0, 19999) i`,
			start, benchDays*86400/20000, start),
		fmt.Sprintf(`INSERT INTO incidents (correlation_key, rule, site, state, severity, risk, title, opened_ts, updated_ts)
			SELECT 'c-' || i, 1, 'site-' || (i %% 10), CASE WHEN i %% 4 = 0 THEN 'open' ELSE 'closed' END, i %% 11, 50, 'Incident ' || i, %d + i * 3600, %d FROM generate_series(0, 199) i`,
			start, start),
		`ANALYZE`,
	}
	t0 := time.Now()
	for _, q := range stmts {
		if _, err := db.Writer().ExecContext(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	b.Logf("seeded PostgreSQL in %v", time.Since(t0).Round(time.Second))
	benchRollup(b, db)
	return db
}

func BenchmarkBuildEnterprise30dPG(b *testing.B) {
	benchBuildOn(b, benchPG(b), model.TypeEnterprise, 30)
}

func BenchmarkBuildTraffic90dPG(b *testing.B) { benchBuildOn(b, benchPG(b), model.TypeTraffic, 90) }

// BenchmarkReportReads times each read of a 30-day enterprise report on
// the cached SQLite database: where the build's time goes.
func BenchmarkReportReads(b *testing.B) { benchReads(b, benchDB(b)) }

// BenchmarkReportReadsPG is BenchmarkReportReads on PostgreSQL.
func BenchmarkReportReadsPG(b *testing.B) { benchReads(b, benchPG(b)) }

func benchReads(b *testing.B, db *store.DB) {
	ctx := context.Background()
	p := reportPeriodOf(benchNow, 30, "", time.UTC)
	reads := []struct {
		name string
		fn   func() error
	}{
		{"traffic-minutes", func() error { _, err := db.ReportTrafficMinutes(ctx, p.cur); return err }},
		{"traffic-prev-total", func() error { _, _, err := db.ReportTrafficTotal(ctx, p.prev); return err }},
		{"protocols", func() error { _, err := db.ReportProtocols(ctx, p.cur, topN); return err }},
		{"conversations", func() error { _, err := db.ReportConversations(ctx, p.cur, topConversations); return err }},
		{"destinations", func() error { _, err := db.ReportDestinations(ctx, p.cur, destCandidates); return err }},
		{"processes", func() error { _, err := db.ReportProcesses(ctx, p.cur, topN); return err }},
		{"dns", func() error { _, err := db.ReportDNS(ctx, p.cur, topN); return err }},
		{"applications", func() error { _, err := db.ReportApplications(ctx, p.cur, topN); return err }},
		{"alert-keys", func() error { _, err := db.ReportAlertKeys(ctx, p.cur, topN); return err }},
		{"agent-uptime", func() error { _, err := db.ReportAgentUptime(ctx, p.cur, maxNamedAgents); return err }},
	}
	for _, r := range reads {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				if err := r.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
