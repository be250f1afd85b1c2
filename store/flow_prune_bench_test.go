package store_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/store"
	"netmon/store/flowagg"
	"netmon/store/record"
	"netmon/store/storetest"
)

// envPruneMinuteRows sets the detail rows per minute of BenchmarkFlowPrune
// (1000, the default budget, is a day of an exporter with 10^6 distinct
// conversations: 1.44 M rows a day).
const envPruneMinuteRows = "NETMON_BENCH_PRUNE_MINUTE_ROWS"

// BenchmarkFlowPrune fills seven expired days of flow_minutes (1440
// minutes a day of NETMON_BENCH_PRUNE_MINUTE_ROWS rows, 150 unless set)
// and prunes them the two ways side by side, on SQLite and PostgreSQL:
// "drop", the day tables dropped whole (flow_days.go), and "delete", the
// same rows in one plain table purged by the batched DELETE that other
// raw tables keep. Meanwhile an ingest writer appends a 500-row minute
// every 20 ms; it reports the prune's time, its longest single write
// (on SQLite the write lock's hold) and the ingest's slowest write.
func BenchmarkFlowPrune(b *testing.B) {
	minuteRows := 150
	if v, err := strconv.Atoi(os.Getenv(envPruneMinuteRows)); err == nil && v > 0 {
		minuteRows = v
	}
	for _, dialect := range []string{"sqlite", "postgres"} {
		for _, way := range []string{"drop", "delete"} {
			b.Run(dialect+"/"+way, func(b *testing.B) {
				var db *store.DB
				if dialect == "sqlite" {
					db = storetest.OpenSQLite(b)
				} else {
					db = storetest.OpenPostgres(b)
				}
				benchPrune(b, db, way, minuteRows)
			})
		}
	}
}

func benchPrune(b *testing.B, db *store.DB, way string, minuteRows int) {
	ctx := context.Background()
	now := time.Now().Unix()
	today := now - now%86400
	first := today - 9*86400 // days today-9 .. today-3 expire with 48 h of retention
	table := "flow_minutes"
	if way == "delete" {
		table = "flow_flat"
		ddl := `CREATE TABLE flow_flat (ts BIGINT NOT NULL, exporter TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL,
			src_port INTEGER NOT NULL, dst_port INTEGER NOT NULL, proto INTEGER NOT NULL, packets BIGINT NOT NULL,
			octets BIGINT NOT NULL, flows BIGINT NOT NULL, first_seen BIGINT NOT NULL, last_seen BIGINT NOT NULL)`
		for _, q := range []string{ddl, `CREATE INDEX flow_flat_ts ON flow_flat (ts)`, `CREATE INDEX flow_flat_pair ON flow_flat (src, dst, ts)`} {
			if _, err := db.Writer().ExecContext(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
	} else if err := db.EnsureFlowDays(ctx, first, today); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	for d := range 7 {
		day := first + int64(d)*86400
		target := table
		if way == "drop" && db.Dialect() == store.SQLite {
			target = store.FlowDayTable("flow_minutes", day)
		}
		fillDay(b, db, target, day, minuteRows)
	}
	rows := int64(7 * 1440 * minuteRows)
	b.Logf("%s: filled %d rows in %s", table, rows, time.Since(t0).Round(time.Millisecond))
	_, _ = db.Writer().ExecContext(ctx, `ANALYZE`)

	r := store.NewRetention(storetest.Logger(b), store.RetentionConfig{Hours: 48, Interval: time.Hour}, db, prometheus.NewRegistry())
	if err := r.Register(table, "ts"); err != nil {
		b.Fatal(err)
	}
	minute := ingestMinute(now)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var lat []time.Duration
	var werr error
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			w0 := time.Now()
			if _, err := db.WriteFlowMinutes(ctx, minute); err != nil {
				werr = err
				return
			}
			lat = append(lat, time.Since(w0))
		}
	})
	time.Sleep(300 * time.Millisecond) // the writer's baseline
	p0 := time.Now()
	deleted, err := r.RunOnce(ctx)
	took := time.Since(p0)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err != nil || werr != nil {
		b.Fatalf("prune: %v; ingest: %v", err, werr)
	}
	var left int64
	if err := db.Reader().QueryRowContext(ctx, fmt.Sprintf(`SELECT COUNT(*) FROM %s WHERE ts < %d`, table, today-2*86400)).Scan(&left); err != nil || left != 0 {
		b.Fatalf("%d expired rows left (%v)", left, err)
	}
	if way == "delete" && deleted[table] != rows {
		b.Fatalf("deleted %d rows, want %d", deleted[table], rows)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(rows), "rows")
	b.ReportMetric(float64(took.Milliseconds()), "prune_ms")
	b.ReportMetric(float64(store.MaxHold(r).Microseconds())/1000, "longest_write_ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "ingest_max_ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ingest_p50_ms")
	b.ReportMetric(float64(len(lat)), "ingest_writes")
}

// fillDay inserts a day of minuteRows rows a minute into table, one
// statement per hour.
func fillDay(b *testing.B, db *store.DB, table string, day int64, minuteRows int) {
	ctx := context.Background()
	row := `$1 + m*60, '192.0.2.1', '10.' || ((i/65536)%256) || '.' || ((i/256)%256) || '.' || (i%256), '203.0.113.' || (i%250), 1024 + (i%60000), 443, 6, 1 + (i%100), 1000 + i, 1 + (i%10), $1 + m*60 + 5, $1 + m*60 + 50`
	q := `INSERT INTO ` + table + ` SELECT ` + row + ` FROM generate_series(0, 59) m, generate_series(0, $2 - 1) i`
	if db.Dialect() == store.SQLite {
		q = `WITH RECURSIVE ms(m) AS (SELECT 0 UNION ALL SELECT m + 1 FROM ms WHERE m < 59),
			ns(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM ns WHERE i < $2 - 1) INSERT INTO ` + table + ` SELECT ` + row + ` FROM ms, ns`
	}
	for h := range 24 {
		// The minutes of one hour, a few thousand rows each, stored in
		// time order as the writer stores them.
		if _, err := db.Writer().ExecContext(ctx, q, day+int64(h)*3600, minuteRows); err != nil {
			b.Fatal(err)
		}
	}
}

// ingestMinute is a 500-row minute of the current time.
func ingestMinute(now int64) []flowagg.Minute {
	var fs []record.Flow
	for i := range 500 {
		fs = append(fs, record.Flow{TS: now - now%60 - 120, Exporter: netip.MustParseAddr("192.0.2.7"), Src: netip.AddrFrom4([4]byte{10, 7, byte(i >> 8), byte(i)}),
			Dst: netip.MustParseAddr("203.0.113.7"), SrcPort: uint16(i), DstPort: 443, Proto: 6, Packets: 1, Octets: 100})
	}
	return flowagg.Sums(flowagg.DefaultConfig(), fs)
}
