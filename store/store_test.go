package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/storetest"
)

func TestOpen(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		want := store.Dialect(t.Name()[strings.LastIndex(t.Name(), "/")+1:])
		if got := db.Dialect(); got != want {
			t.Errorf("Dialect() = %q, want %q", got, want)
		}
		if err := db.Ping(t.Context()); err != nil {
			t.Errorf("Ping() = %v", err)
		}
		wantPools := 2
		if db.Dialect() == store.Postgres {
			wantPools = 1
			if db.Reader() != db.Writer() {
				t.Error("Reader() and Writer() differ on PostgreSQL")
			}
		}
		if got := len(db.Collectors()); got != wantPools {
			t.Errorf("len(Collectors()) = %d, want %d", got, wantPools)
		}
	})
}

func TestSQLitePragmas(t *testing.T) {
	db := storetest.OpenSQLite(t)
	tests := []struct {
		desc   string
		pool   *sql.DB
		pragma string
		want   string
	}{
		{"writer journal mode", db.Writer(), "journal_mode", "wal"},
		{"writer busy timeout", db.Writer(), "busy_timeout", "5000"},
		{"writer foreign keys", db.Writer(), "foreign_keys", "1"},
		{"writer synchronous NORMAL", db.Writer(), "synchronous", "1"},
		{"writer writable", db.Writer(), "query_only", "0"},
		{"reader journal mode", db.Reader(), "journal_mode", "wal"},
		{"reader busy timeout", db.Reader(), "busy_timeout", "5000"},
		{"reader foreign keys", db.Reader(), "foreign_keys", "1"},
		{"reader synchronous NORMAL", db.Reader(), "synchronous", "1"},
		{"reader read-only", db.Reader(), "query_only", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			var got string
			if err := tt.pool.QueryRowContext(t.Context(), "PRAGMA "+tt.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", tt.pragma, err)
			}
			if got != tt.want {
				t.Errorf("PRAGMA %s = %q, want %q", tt.pragma, got, tt.want)
			}
		})
	}
	if got := db.Writer().Stats().MaxOpenConnections; got != 1 {
		t.Errorf("writer MaxOpenConnections = %d, want 1", got)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		desc     string
		cfg      store.Config
		contains []string
	}{
		{"empty DSN", store.Config{MaxConns: 1}, []string{"empty DSN"}},
		{"no pool", store.Config{DSN: filepath.Join(dir, "a.db")}, []string{"MaxConns"}},
		{"missing directory", store.Config{DSN: filepath.Join(dir, "nope", "a.db"), MaxConns: 1}, []string{"open sqlite database", "does not exist"}},
		{"in-memory", store.Config{DSN: ":memory:", MaxConns: 1}, []string{"plain file path"}},
		{"query string", store.Config{DSN: filepath.Join(dir, "a.db?mode=ro"), MaxConns: 1}, []string{"'?'"}},
		{"unknown scheme", store.Config{DSN: "mysql://u:secret@h/db", MaxConns: 1}, []string{"unsupported database URL"}},
		{"postgres unreachable", store.Config{DSN: "postgres://u:secret@127.0.0.1:1/db?connect_timeout=2", MaxConns: 1}, []string{"open postgres database", "unreachable"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			start := time.Now()
			db, err := store.Open(t.Context(), storetest.Logger(t), tt.cfg)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded, want an error")
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q leaks the password", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Open took %s to fail", d)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open created the missing directory: %v", err)
	}
}

func TestRedactedPostgresPassword(t *testing.T) {
	// Trust authentication ignores the password, which lets the test
	// open a real database with one in its DSN.
	u, err := url.Parse(storetest.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "secret")
	db, err := store.Open(t.Context(), storetest.Logger(t), store.Config{DSN: u.String(), MaxConns: 1})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the CI PostgreSQL must use trust authentication: %v", err)
		}
		t.Skipf("server refuses the password (not trust authentication?): %v", err)
	}
	defer db.Close()
	if got := db.Redacted(); strings.Contains(got, "secret") || !strings.Contains(got, u.Host) {
		t.Errorf("Redacted() = %q, want the DSN without its password", got)
	}
}

func TestReaderIsReadOnlyOnSQLite(t *testing.T) {
	db := storetest.OpenSQLite(t)
	_, err := db.Reader().ExecContext(t.Context(), `INSERT INTO settings (key, value, updated_at) VALUES ('k', 'v', 0)`)
	if err == nil {
		t.Fatal("write through Reader succeeded, want an error")
	}
}

func TestInTx(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := t.Context()
		insert := func(key string) func(*store.Tx) error {
			return func(tx *store.Tx) error {
				_, err := tx.SQL().ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1, 'v', 0)`, key)
				return err
			}
		}
		errBoom := errors.New("boom")
		tests := []struct {
			desc    string
			key     string
			fn      func(*store.Tx) error
			wantErr error
			stored  bool
		}{
			{"commit on nil", "committed", insert("committed"), nil, true},
			{"rollback on error", "rolled_back", func(tx *store.Tx) error {
				if err := insert("rolled_back")(tx); err != nil {
					return err
				}
				return errBoom
			}, errBoom, false},
		}
		for _, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				if err := db.InTx(ctx, tt.fn); !errors.Is(err, tt.wantErr) {
					t.Fatalf("InTx() = %v, want %v", err, tt.wantErr)
				}
				_, err := db.GetSetting(ctx, tt.key)
				if diff := cmp.Diff(err == nil, tt.stored); diff != "" {
					t.Errorf("stored (-got, +want):\n%s (err %v)", diff, err)
				}
			})
		}
		t.Run("rollback on panic", func(t *testing.T) {
			func() {
				defer func() { _ = recover() }()
				_ = db.InTx(ctx, func(tx *store.Tx) error {
					_ = insert("panicked")(tx)
					panic("boom")
				})
			}()
			if _, err := db.GetSetting(ctx, "panicked"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("GetSetting after panic = %v, want ErrNotFound", err)
			}
			// The writer must be usable again (on SQLite: not stuck in a
			// transaction on its single connection).
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := db.PutSetting(ctx, "after_panic", "v"); err != nil {
				t.Errorf("PutSetting after panic: %v", err)
			}
		})
	})
}
