package migrations_test

import (
	"database/sql"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/migrations"
	"netmon/store/storetest"
)

// fileID is what must match between the two dialects.
type fileID struct {
	Version int
	Name    string
}

func ids(t *testing.T, dialect string) []fileID {
	t.Helper()
	files, err := migrations.Files(dialect)
	if err != nil {
		t.Fatalf("Files(%q): %v", dialect, err)
	}
	var out []fileID
	for _, f := range files {
		out = append(out, fileID{f.Version, f.Name})
	}
	return out
}

func TestParity(t *testing.T) {
	sqlite, postgres := ids(t, "sqlite"), ids(t, "postgres")
	if len(sqlite) == 0 {
		t.Fatal("no migrations embedded")
	}
	if diff := cmp.Diff(sqlite, postgres); diff != "" {
		t.Errorf("sqlite/ and postgres/ hold different migrations (-sqlite, +postgres):\n%s", diff)
	}
	for i, id := range sqlite {
		if id.Version != i+1 {
			t.Errorf("migration %d has version %04d, want %04d (no gaps)", i, id.Version, i+1)
		}
	}
}

func TestFilesUnknownDialect(t *testing.T) {
	if _, err := migrations.Files("mysql"); err == nil {
		t.Error("Files(mysql) succeeded, want an error")
	}
}

// row is a schema_migrations row without its time.
type row struct {
	Version int
	Name    string
	SHA256  string
}

func appliedRows(t *testing.T, db *sql.DB) []row {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT version, name, sha256 FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.Version, &r.Name, &r.SHA256); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantRows(t *testing.T, dialect store.Dialect) []row {
	t.Helper()
	files, err := migrations.Files(string(dialect))
	if err != nil {
		t.Fatal(err)
	}
	var out []row
	for _, f := range files {
		out = append(out, row{f.Version, f.Name, f.SHA256})
	}
	return out
}

func TestApplyFresh(t *testing.T) {
	storetest.EachEmpty(t, func(t *testing.T, db *sql.DB, dialect store.Dialect) {
		want := wantRows(t, dialect)
		tests := []struct {
			desc        string
			wantApplied int
		}{
			{"fresh database applies every file", len(want)},
			{"second run applies nothing", 0},
		}
		for _, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				applied, err := migrations.Apply(t.Context(), db, string(dialect), storetest.Logger(t))
				if err != nil {
					t.Fatalf("Apply: %v", err)
				}
				if applied != tt.wantApplied {
					t.Errorf("Apply applied %d, want %d", applied, tt.wantApplied)
				}
				if diff := cmp.Diff(appliedRows(t, db), want); diff != "" {
					t.Errorf("schema_migrations (-got, +want):\n%s", diff)
				}
			})
		}
		var n int
		if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM settings`).Scan(&n); err != nil {
			t.Errorf("settings table missing after Apply: %v", err)
		}
	})
}

func TestApplyRefuses(t *testing.T) {
	tests := []struct {
		desc     string
		tamper   string
		contains []string
	}{
		{
			desc:     "applied file changed",
			tamper:   `UPDATE schema_migrations SET sha256 = 'deadbeef' WHERE version = 1`,
			contains: []string{"0001_settings.sql", "changed", "refusing to start"},
		},
		{
			desc:     "applied file renamed",
			tamper:   `UPDATE schema_migrations SET name = 'other' WHERE version = 1`,
			contains: []string{"0001_settings.sql", "changed"},
		},
		{
			desc:     "database newer than binary",
			tamper:   `INSERT INTO schema_migrations (version, name, applied_at, sha256) VALUES (9999, 'future', 0, 'x')`,
			contains: []string{"9999_future.sql", "newer than this binary", "refusing to start"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			storetest.EachEmpty(t, func(t *testing.T, db *sql.DB, dialect store.Dialect) {
				if _, err := migrations.Apply(t.Context(), db, string(dialect), nil); err != nil {
					t.Fatalf("first Apply: %v", err)
				}
				if _, err := db.ExecContext(t.Context(), tt.tamper); err != nil {
					t.Fatalf("tamper: %v", err)
				}
				applied, err := migrations.Apply(t.Context(), db, string(dialect), nil)
				if err == nil {
					t.Fatalf("Apply succeeded (applied %d), want an error", applied)
				}
				for _, s := range tt.contains {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
			})
		})
	}
}

// TestApplyConcurrent starts several runners on one database at once, as
// hubs starting together would: each file must be applied exactly once.
func TestApplyConcurrent(t *testing.T) {
	storetest.EachEmpty(t, func(t *testing.T, db *sql.DB, dialect store.Dialect) {
		// Separate pools stand for separate processes: on SQLite more
		// handles on the test's file, on PostgreSQL handles on one more
		// fresh schema (db's DSN is not exposed).
		const runners = 4
		var pools []*sql.DB
		driver, dsn := "pgx", ""
		if dialect == store.SQLite {
			var file string
			if err := db.QueryRowContext(t.Context(), `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
				t.Fatal(err)
			}
			driver, dsn = "sqlite", file+"?_txlock=immediate&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
			pools = append(pools, db)
		} else {
			dsn = storetest.PostgresDSN(t)
		}
		for len(pools) < runners {
			p, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			p.SetMaxOpenConns(1)
			t.Cleanup(func() { _ = p.Close() })
			pools = append(pools, p)
		}
		var wg sync.WaitGroup
		applied := make([]int, len(pools))
		errs := make([]error, len(pools))
		for i, p := range pools {
			wg.Go(func() { applied[i], errs[i] = migrations.Apply(t.Context(), p, string(dialect), nil) })
		}
		wg.Wait()
		total := 0
		for i := range pools {
			if errs[i] != nil {
				t.Errorf("runner %d: %v", i, errs[i])
			}
			total += applied[i]
		}
		want := wantRows(t, dialect)
		if total != len(want) {
			t.Errorf("runners applied %d files in total, want %d", total, len(want))
		}
		if diff := cmp.Diff(appliedRows(t, pools[0]), want); diff != "" {
			t.Errorf("schema_migrations (-got, +want):\n%s", diff)
		}
	})
}
