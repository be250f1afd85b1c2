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
	path := filepath.Join(os.TempDir(), fmt.Sprintf("netmon-report-bench-v1-s%d-d%d-f%d.db", sampleMin, deepHours, flows))
	_, statErr := os.Stat(path)
	ctx := context.Background()
	db, err := store.Open(ctx, storetest.Logger(b), store.Config{DSN: path, MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	if statErr == nil {
		return db
	}
	start := time.Now()
	if err := benchSeed(ctx, db, sampleMin, deepHours, flows); err != nil {
		_ = os.Remove(path)
		b.Fatal(err)
	}
	b.Logf("seeded %s in %v", path, time.Since(start).Round(time.Second))
	return db
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
func benchBuild(b *testing.B, typ string, days int) {
	db := benchDB(b)
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
