package migrations_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"

	"netmon/store"
	"netmon/store/migrations"
	"netmon/store/storetest"
)

// TestFlowPartitionsUpgrade runs 0014_flow_partitions on a database
// holding flows written under 0013: the readers' queries on flow_minutes
// and flow_hours give the same answers after it (the rows kept in the
// default table or partition), and an INSERT into either still works.
func TestFlowPartitionsUpgrade(t *testing.T) {
	storetest.EachEmpty(t, func(t *testing.T, db *sql.DB, dialect store.Dialect) {
		ctx := t.Context()
		files, err := migrations.Files(string(dialect))
		if err != nil {
			t.Fatal(err)
		}
		var upgrade migrations.File
		for _, f := range files {
			switch {
			case f.Version < 14:
				if _, err := db.ExecContext(ctx, f.SQL); err != nil {
					t.Fatalf("%s: %v", f.Filename(), err)
				}
			case f.Name == "flow_partitions":
				upgrade = f
			}
		}
		const ins = `INSERT INTO %s (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen)
			SELECT 1700000000 + (i %% 3000) * 60, '192.0.2.' || (i %% 3), '10.0.0.' || (i %% 200), '203.0.113.1', i %% 1000, 443, 6, 1, i, 1, 1700000000 + i, 1700000000 + i + 5 FROM %s`
		series := `generate_series(0, 9999) i`
		if dialect == store.SQLite {
			series = `(WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 9999) SELECT i FROM s)`
		}
		for _, table := range []string{"flow_minutes", "flow_hours"} {
			if _, err := db.ExecContext(ctx, sprintf(ins, table, series)); err != nil {
				t.Fatalf("fill %s: %v", table, err)
			}
		}
		queries := []string{
			`SELECT exporter, COUNT(*), SUM(octets), MIN(first_seen), MAX(last_seen) FROM flow_minutes WHERE ts >= 1700090000 GROUP BY exporter ORDER BY exporter`,
			`SELECT src, SUM(octets) FROM flow_minutes WHERE src = '10.0.0.7' AND dst = '203.0.113.1' GROUP BY src`,
			`SELECT exporter, COUNT(*), SUM(octets) FROM flow_hours GROUP BY exporter ORDER BY exporter`,
		}
		answers := func() [][]string {
			var out [][]string
			for _, q := range queries {
				rows, err := db.QueryContext(ctx, q)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				cols, _ := rows.Columns()
				for rows.Next() {
					vals := make([]sql.NullString, len(cols))
					dest := make([]any, len(cols))
					for i := range vals {
						dest[i] = &vals[i]
					}
					if err := rows.Scan(dest...); err != nil {
						t.Fatal(err)
					}
					var row []string
					for _, v := range vals {
						row = append(row, v.String)
					}
					out = append(out, row)
				}
				rows.Close()
			}
			return out
		}
		before := answers()
		if len(before) != 3+1+3 {
			t.Fatalf("answers before the upgrade: %v", before)
		}
		if _, err := db.ExecContext(ctx, upgrade.SQL); err != nil {
			t.Fatalf("%s: %v", upgrade.Filename(), err)
		}
		if diff := cmp.Diff(answers(), before); diff != "" {
			t.Errorf("answers after the upgrade (-got, +want):\n%s", diff)
		}
		// SQLite keeps them in the default table; PostgreSQL in the old
		// table, now the partition of every day up to today, named after
		// today (retention drops it whole when today expires).
		kept := "flow_minutes_default"
		if dialect == store.Postgres {
			kept = store.FlowDayTable("flow_minutes", time.Now().Unix())
		}
		var n int64
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+kept).Scan(&n); err != nil || n != 10000 {
			t.Errorf("%s holds %d rows (%v), want the 10000 written before", kept, n, err)
		}
		if dialect == store.Postgres {
			// Today overlaps the old table's partition, with the error
			// code the store takes for "already covered"; tomorrow does not.
			today := time.Now().Unix() - time.Now().Unix()%86400
			for _, tc := range []struct {
				day  int64
				code string
			}{{today, "42P17"}, {today + 86400, ""}} {
				_, err := db.ExecContext(ctx, sprintf(`CREATE TABLE p%[1]d (LIKE flow_minutes INCLUDING DEFAULTS); ALTER TABLE flow_minutes ATTACH PARTITION p%[1]d FOR VALUES FROM (%[1]d) TO (%[2]d)`, tc.day, tc.day+86400))
				got := ""
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) {
					got = pgErr.Code
				} else if err != nil {
					got = err.Error()
				}
				if got != tc.code {
					t.Errorf("partition of day %d: %v, want code %q", tc.day, err, tc.code)
				}
			}
		}
		if _, err := db.ExecContext(ctx, sprintf(ins, "flow_minutes", "(SELECT 1 AS i) AS one")); err != nil {
			t.Fatalf("insert after the upgrade: %v", err)
		}
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM flow_minutes`).Scan(&n); err != nil || n != 10001 {
			t.Errorf("flow_minutes holds %d rows (%v) after an insert, want 10001", n, err)
		}
	})
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
