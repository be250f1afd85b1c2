package store_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/storetest"
)

// BenchmarkConversations24h fills flow_hours with 24 hours of 100 000
// distinct 5-tuples each hour (2.4 million rows) and times the 24-hour
// conversation queries the API runs (5-tuple and pair, top 5 000 rows an
// hour), reporting p50 and p99 over 20 queries, on SQLite and PostgreSQL.
func BenchmarkConversations24h(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			var db *store.DB
			if dialect == "sqlite" {
				db = storetest.OpenSQLite(b)
			} else {
				db = storetest.OpenPostgres(b)
			}
			ctx := context.Background()
			now := time.Now().Truncate(time.Hour).Unix()
			first := now - 23*3600
			fill := `INSERT INTO flow_hours SELECT $1 + h*3600, '192.0.2.1', '10.' || ((i/65536)%256) || '.' || ((i/256)%256) || '.' || (i%256),
				'203.0.113.' || (i%250), 1024 + (i%60000), 443, 6, 1 + (i%100), 1000 + i, 1 + (i%10), $1 + h*3600 + 60`
			if db.Dialect() == store.Postgres {
				fill += ` FROM generate_series(0, 23) h, generate_series(0, 99999) i`
			} else {
				fill = `WITH RECURSIVE hs(h) AS (SELECT 0 UNION ALL SELECT h + 1 FROM hs WHERE h < 23),
					ns(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM ns WHERE i < 99999) ` + fill + ` FROM hs, ns`
			}
			start := time.Now()
			if _, err := db.Writer().ExecContext(ctx, fill, first); err != nil {
				b.Fatal(err)
			}
			if db.Dialect() == store.Postgres {
				_, _ = db.Writer().ExecContext(ctx, `ANALYZE flow_hours`)
			} else {
				_, _ = db.Writer().ExecContext(ctx, `ANALYZE`)
			}
			b.Logf("%s: 2 400 000 hourly rows written in %v", dialect, time.Since(start).Round(time.Second))
			for _, by5 := range []bool{true, false} {
				var lat []time.Duration
				for range 20 {
					t0 := time.Now()
					limit := 50
					if !by5 {
						limit = 2000
					}
					rows, err := db.ConversationsHourly(ctx, first, now, by5, "octets", 5000, limit, "")
					if err != nil || len(rows) == 0 {
						b.Fatalf("query: %d rows, %v", len(rows), err)
					}
					lat = append(lat, time.Since(t0))
				}
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				mode := "5tuple"
				if !by5 {
					mode = "pair"
				}
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, mode+"_p50_ms")
				b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, mode+"_p99_ms")
			}
		})
	}
}
