package store_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/storetest"
)

// BenchmarkFlowQueries fills the flow tables as a day of a high-cardinality
// exporter leaves them with the default budgets (23 rolled-up hours of
// 2 000 detail rows and an other row, then the current hour's 60 minutes
// of 1 000 detail rows each, not yet rolled up) and times the API's
// queries: /flows?minutes=15, conversations 1 h and 24 h (5-tuple and
// pair), p50 and p99 over 20 queries, then the roll-up of the current
// hour, on SQLite and PostgreSQL.
func BenchmarkFlowQueries(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			var db *store.DB
			if dialect == "sqlite" {
				db = storetest.OpenSQLite(b)
			} else {
				db = storetest.OpenPostgres(b)
			}
			ctx := context.Background()
			now := time.Now().Unix()
			hour := now - now%3600
			first := hour - 23*3600
			// The days' partitions first, as the writer and retention
			// create them (else the rows land in the default partition).
			if err := db.EnsureFlowDays(ctx, first, now); err != nil {
				b.Fatal(err)
			}
			const row = `'192.0.2.1', '10.' || ((i/65536)%256) || '.' || ((i/256)%256) || '.' || (i%256), '203.0.113.' || (i%250), 1024 + (i%60000), 443, 6, 1 + (i%100), 1000 + i, 1 + (i%10)`
			hours := `INSERT INTO flow_hours SELECT $1 + h*3600, ` + row + `, $1 + h*3600 + 5, $1 + h*3600 + 60`
			minutes := `INSERT INTO flow_minutes SELECT $1 + m*60, ` + row + `, $1 + m*60 + 5, $1 + m*60 + 50`
			state := `INSERT INTO flow_hour_state SELECT $1 + h*3600, 1`
			if db.Dialect() == store.Postgres {
				hours += ` FROM generate_series(0, 22) h, generate_series(0, 1999) i`
				minutes += ` FROM generate_series(0, 59) m, generate_series(0, 999) i`
				state += ` FROM generate_series(0, 22) h`
			} else {
				hours = `WITH RECURSIVE hs(h) AS (SELECT 0 UNION ALL SELECT h + 1 FROM hs WHERE h < 22),
					ns(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM ns WHERE i < 1999) ` + hours + ` FROM hs, ns`
				minutes = `WITH RECURSIVE ms(m) AS (SELECT 0 UNION ALL SELECT m + 1 FROM ms WHERE m < 59),
					ns(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM ns WHERE i < 999) ` + minutes + ` FROM ms, ns`
				state = `WITH RECURSIVE hs(h) AS (SELECT 0 UNION ALL SELECT h + 1 FROM hs WHERE h < 22) ` + state + ` FROM hs`
			}
			for _, q := range []struct {
				sql string
				arg int64
			}{{hours, first}, {minutes, now - now%60 - 59*60}, {state, first}} {
				if _, err := db.Writer().ExecContext(ctx, q.sql, q.arg); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := db.Writer().ExecContext(ctx, `INSERT INTO flow_hour_state VALUES ($1, 0)`, hour); err != nil {
				b.Fatal(err)
			}
			_, _ = db.Writer().ExecContext(ctx, `ANALYZE`)
			for _, q := range []struct {
				name string
				run  func() (int, error)
			}{
				{"flows15m", func() (int, error) {
					r, err := db.TopFlows(ctx, now-900, 20, "", store.FlowFilter{}, nil)
					return len(r), err
				}},
				{"conv1h", func() (int, error) {
					r, err := db.Conversations(ctx, now-3600, true, "octets", 50, "", store.FlowFilter{}, nil)
					return len(r), err
				}},
				{"conv24h", func() (int, error) {
					r, err := db.ConversationsHourly(ctx, now-86400, true, "octets", 50, "", store.FlowFilter{}, nil)
					return len(r), err
				}},
				{"conv24h_pair", func() (int, error) {
					r, err := db.ConversationsHourly(ctx, now-86400, false, "octets", 2000, "", store.FlowFilter{}, nil)
					return len(r), err
				}},
			} {
				var lat []time.Duration
				for range 20 {
					t0 := time.Now()
					n, err := q.run()
					if err != nil || n == 0 {
						b.Fatalf("%s: %d rows, %v", q.name, n, err)
					}
					lat = append(lat, time.Since(t0))
				}
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, q.name+"_p50_ms")
				b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, q.name+"_p99_ms")
			}
			// The roll-up of the current hour's minutes (up to 60 000 rows).
			t0 := time.Now()
			if n, err := db.BuildFlowHours(ctx, hour+3600, 2000); err != nil || n != 1 {
				b.Fatalf("roll-up: %d hours, %v", n, err)
			}
			b.ReportMetric(float64(time.Since(t0).Microseconds())/1000, "hour_rollup_ms")
		})
	}
}
