package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// sqlitePragmas are run by the driver on every new connection, in order.
//
//   - busy_timeout(5000): a connection that finds the file locked (another
//     process, a checkpoint, the read pool during WAL recovery) retries for
//     up to 5 s instead of failing at once with SQLITE_BUSY.
//   - journal_mode(WAL): readers never block the writer nor the writer the
//     readers, which is what makes the separate read pool worth having.
//   - foreign_keys(1): SQLite leaves foreign keys unenforced by default.
//   - synchronous(NORMAL): in WAL mode a commit is a write() of its frames
//     to the -wal file, and fsync happens only at checkpoints. Data handed
//     to write() is in the kernel page cache, which survives the death of
//     the process (kill -9, panic, OOM kill): the next open replays the WAL
//     and every committed transaction is there. Only a power loss or kernel
//     crash before the next checkpoint can lose the last transactions, and
//     even then the database stays consistent (never corrupt). FULL would
//     fsync on every commit for that last guarantee, which the hub's
//     high-rate time-series writes cannot afford.
var sqlitePragmas = []string{
	"busy_timeout(5000)",
	"journal_mode(WAL)",
	"foreign_keys(1)",
	"synchronous(NORMAL)",
}

// openSQLite opens the write and read pools on the file cfg.DSN.
func openSQLite(ctx context.Context, cfg Config) (*DB, error) {
	path := cfg.DSN
	if err := checkSQLitePath(path); err != nil {
		return nil, fmt.Errorf("open sqlite database %q: %w", path, err)
	}

	var params []string
	for _, p := range sqlitePragmas {
		params = append(params, "_pragma="+p)
	}
	// The driver strips the query from a plain path before SQLite sees it.
	common := path + "?" + strings.Join(params, "&")

	// The writer: one connection, so writers queue in database/sql rather
	// than contend for the file lock, and BEGIN IMMEDIATE so a transaction
	// takes the write lock at its start instead of failing with
	// SQLITE_BUSY when it tries to upgrade a read lock mid-way.
	writer, err := sql.Open("sqlite", common+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open sqlite database %q: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)

	// The readers: query_only (applied by the driver after the pragmas
	// above) makes an accidental write through Reader fail loudly instead
	// of racing the writer for the lock.
	reader, err := sql.Open("sqlite", common+"&_query_only=1")
	if err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("open sqlite database %q: %w", path, err)
	}
	reader.SetMaxOpenConns(cfg.MaxConns)
	// Opening a SQLite connection reads the schema: keep them all.
	reader.SetMaxIdleConns(cfg.MaxConns)

	db := &DB{dialect: SQLite, redacted: path, reader: reader, writer: writer, lane: &lane{}}
	if err := checkWAL(ctx, writer); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite database %q: %w", path, err)
	}
	return db, nil
}

// checkSQLitePath refuses what the two-pool design or the DSN building
// cannot handle, and a missing directory: SQLite would fail later with a
// vaguer "unable to open database file".
func checkSQLitePath(path string) error {
	switch {
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		// Each pool would get its own private in-memory database, and a
		// URI would bypass the parameters chosen here.
		return errors.New("want a plain file path (no :memory:, no file: URI)")
	case strings.Contains(path, "?"):
		return errors.New("the path may not contain '?': connection parameters are set by netmon")
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("directory %q does not exist", dir)
		}
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%q is not a directory", dir)
	}
	return nil
}

// checkWAL connects the writer (creating the file) and makes sure the
// journal mode really is WAL: SQLite silently keeps the old mode where WAL
// is impossible (some network filesystems), and the read pool relies on it.
func checkWAL(ctx context.Context, writer *sql.DB) error {
	var mode string
	if err := writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("journal_mode is %q, want wal (is the file on a filesystem without shared memory support?)", mode)
	}
	return nil
}
