package migrations_test

import (
	"database/sql"
	"testing"

	"netmon/store"
	"netmon/store/migrations"
	"netmon/store/storetest"
)

// TestFlowAppendUpgrade runs 0011_flow_append on a database holding flows
// in the old upserted tables: every row is kept (first_seen its period's
// start, the best the old rows knew), and the old hours are marked built
// so that the background roll-up does not count them twice.
func TestFlowAppendUpgrade(t *testing.T) {
	storetest.EachEmpty(t, func(t *testing.T, db *sql.DB, dialect store.Dialect) {
		files, err := migrations.Files(string(dialect))
		if err != nil {
			t.Fatal(err)
		}
		run := func(f migrations.File) {
			t.Helper()
			if _, err := db.ExecContext(t.Context(), f.SQL); err != nil {
				t.Fatalf("%s: %v", f.Filename(), err)
			}
		}
		var upgrade migrations.File
		for _, f := range files {
			switch {
			case f.Version < 11:
				run(f)
			case f.Name == "flow_append":
				upgrade = f
			}
		}
		const cols = `(ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, last_seen)`
		for _, q := range []string{
			`INSERT INTO flow_minutes ` + cols + ` VALUES (1700000040, '192.0.2.1', '10.0.0.1', '10.0.0.2', 1000, 443, 6, 10, 1000, 2, 1700000050)`,
			`INSERT INTO flow_minutes ` + cols + ` VALUES (1700003640, '192.0.2.1', '10.0.0.1', '10.0.0.2', 1000, 443, 6, 1, 100, 1, 1700003641)`,
			`INSERT INTO flow_hours ` + cols + ` VALUES (1699999200, '192.0.2.1', '10.0.0.1', '10.0.0.2', 1000, 443, 6, 10, 1000, 2, 1700000050)`,
			`INSERT INTO flow_hours ` + cols + ` VALUES (1700002800, '192.0.2.1', '10.0.0.1', '10.0.0.2', 1000, 443, 6, 1, 100, 1, 1700003641)`,
		} {
			if _, err := db.ExecContext(t.Context(), q); err != nil {
				t.Fatal(err)
			}
		}
		run(upgrade)
		var minutes, octets, firstSeen, hours, built int64
		if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*), SUM(octets), MIN(first_seen) FROM flow_minutes`).Scan(&minutes, &octets, &firstSeen); err != nil {
			t.Fatal(err)
		}
		if minutes != 2 || octets != 1100 || firstSeen != 1700000040 {
			t.Errorf("flow_minutes after the upgrade: %d rows, %d octets, first seen %d", minutes, octets, firstSeen)
		}
		if err := db.QueryRowContext(t.Context(), `SELECT (SELECT COUNT(*) FROM flow_hours), (SELECT COUNT(*) FROM flow_hour_state WHERE built = 1)`).Scan(&hours, &built); err != nil {
			t.Fatal(err)
		}
		if hours != 2 || built != 2 {
			t.Errorf("flow_hours %d rows, %d hours marked built; want 2 and 2", hours, built)
		}
	})
}
