// Package storetest opens throwaway databases of both dialects for the
// tests of package store and of every package built on it, so each test
// runs once on SQLite and once on PostgreSQL. It is imported by tests only.
//
// PostgreSQL comes from NETMON_TEST_PG_DSN (for example
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable); each database
// is a fresh schema of that database, dropped at the end of the test. The
// PostgreSQL half is skipped when the variable is unset or the server is
// unreachable, except under CI=true where it fails: CI must test both.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver

	"netmon/store"
)

// EnvPostgresDSN names the environment variable holding the PostgreSQL
// server used by tests.
const EnvPostgresDSN = "NETMON_TEST_PG_DSN"

// maxConns is the pool size of test databases.
const maxConns = 4

// Each runs fn as two subtests named "sqlite" and "postgres", each on a
// fresh, migrated database closed when the subtest ends.
func Each(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	t.Run(string(store.SQLite), func(t *testing.T) { fn(t, OpenSQLite(t)) })
	t.Run(string(store.Postgres), func(t *testing.T) { fn(t, OpenPostgres(t)) })
}

// EachEmpty runs fn as two subtests named "sqlite" and "postgres", each on
// a fresh database on which no migration ran, through a plain *sql.DB (on
// SQLite a single connection). It serves the tests of store/migrations.
func EachEmpty(t *testing.T, fn func(t *testing.T, db *sql.DB, dialect store.Dialect)) {
	t.Helper()
	t.Run(string(store.SQLite), func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.db")
		db, err := sql.Open("sqlite", path+"?_txlock=immediate&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
		if err != nil {
			t.Fatalf("open sqlite %q: %v", path, err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { _ = db.Close() })
		fn(t, db, store.SQLite)
	})
	t.Run(string(store.Postgres), func(t *testing.T) {
		db, err := sql.Open("pgx", PostgresDSN(t))
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		t.Cleanup(func() { _ = db.Close() })
		fn(t, db, store.Postgres)
	})
}

// OpenSQLite opens a store on a new SQLite file in t.TempDir().
func OpenSQLite(t testing.TB) *store.DB {
	t.Helper()
	return open(t, filepath.Join(t.TempDir(), "netmon.db"))
}

// OpenPostgres opens a store on a new schema of the NETMON_TEST_PG_DSN
// database, or skips (fails under CI=true) as the package comment says.
func OpenPostgres(t testing.TB) *store.DB {
	t.Helper()
	return open(t, PostgresDSN(t))
}

func open(t testing.TB, dsn string) *store.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := store.Open(ctx, Logger(t), store.Config{DSN: dsn, MaxConns: maxConns})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return db
}

// PostgresDSN creates a fresh schema nmtest_<random hex> in the
// NETMON_TEST_PG_DSN database, drops it with CASCADE when the test ends,
// and returns a DSN whose search_path is that schema.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvPostgresDSN)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(EnvPostgresDSN + " must be set in CI")
		}
		t.Skip(EnvPostgresDSN + " is not set; set it to a PostgreSQL URL to run the postgres tests")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		unavailable(t, "open "+EnvPostgresDSN+": "+err.Error())
	}
	t.Cleanup(func() { _ = admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		unavailable(t, "PostgreSQL at "+EnvPostgresDSN+" unreachable: "+err.Error())
	}

	suffix := make([]byte, 8)
	_, _ = rand.Read(suffix)
	schema := "nmtest_" + hex.EncodeToString(suffix)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return withSearchPath(t, base, schema)
}

// withSearchPath adds search_path to a URL or keyword/value DSN; pgx sends
// the parameters it does not know as run-time parameters.
func withSearchPath(t testing.TB, dsn, schema string) string {
	if !strings.Contains(dsn, "://") {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("parse %s: %v", EnvPostgresDSN, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// unavailable skips the test, or fails it under CI=true.
func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (%s must be set and reachable in CI)", why, EnvPostgresDSN)
	}
	t.Skip(why)
}

// Logger returns a logger writing to the test's output, shown for failing
// tests and under -v.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// EachDSN runs fn as two subtests named "sqlite" and "postgres" with a DSN
// of a fresh, empty database (a file path in t.TempDir(), or a DSN of a
// fresh schema), for tests that open the store themselves — a whole hub.
func EachDSN(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, filepath.Join(t.TempDir(), "netmon.db")) })
	t.Run("postgres", func(t *testing.T) { fn(t, PostgresDSN(t)) })
}

// AgentSeqs returns the telemetry seqs stored for agent id, in seq order:
// the exactly-once checks of the fleet tests. A test helper, not a store
// method: nothing in the hub asks for it.
func AgentSeqs(ctx context.Context, db *store.DB, id int64) ([]uint64, error) {
	rows, err := db.Reader().QueryContext(ctx, `SELECT seq FROM agent_samples WHERE agent_id = $1 ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []uint64
	for rows.Next() {
		var s int64
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, uint64(s))
	}
	return out, rows.Err()
}
