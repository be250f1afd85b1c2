// Package migrations holds the schema of the hub's database as numbered SQL
// files embedded in the binary, one folder per dialect, and the runner that
// applies the pending ones at start. It sits under package store, which
// calls Apply from store.Open; it imports nothing of netmon.
//
// Files are named NNNN_name.sql (four digits, lower-case name) and the two
// folders hold the same names: a change that one dialect does not need gets
// a twin containing only a "-- no-op: reason" comment. A file is never
// edited once released (its sha256 is recorded and checked at every start)
// and there are no down files: a fix is a new file.
package migrations

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"time"
)

//go:embed sqlite/*.sql postgres/*.sql
var embedded embed.FS

// File is one migration file of a dialect.
type File struct {
	// Version is the file's four-digit number, unique within a dialect.
	Version int
	// Name is the part of the file name between the number and ".sql".
	Name string
	// SQL is the file's content, run as one script in one transaction.
	SQL string
	// SHA256 is the hex digest of SQL, recorded when the file is applied.
	SHA256 string
}

// Filename returns the file's name, as in "0001_settings.sql".
func (f File) Filename() string { return fmt.Sprintf("%04d_%s.sql", f.Version, f.Name) }

var fileName = regexp.MustCompile(`^([0-9]{4})_([a-z0-9_]+)\.sql$`)

// Files returns the migrations embedded for dialect ("sqlite" or
// "postgres") in version order. A misnamed file or a repeated version is an
// error, so a typo cannot silently skip a migration.
func Files(dialect string) ([]File, error) {
	if dialect != "sqlite" && dialect != "postgres" {
		return nil, fmt.Errorf("unknown dialect %q", dialect)
	}
	entries, err := fs.ReadDir(embedded, dialect)
	if err != nil {
		return nil, fmt.Errorf("list %s migrations: %w", dialect, err)
	}
	var files []File
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration %s/%s: name does not match NNNN_name.sql", dialect, e.Name())
		}
		version, _ := strconv.Atoi(m[1])
		if version == 0 {
			return nil, fmt.Errorf("migration %s/%s: version 0000 is reserved", dialect, e.Name())
		}
		content, err := fs.ReadFile(embedded, dialect+"/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s/%s: %w", dialect, e.Name(), err)
		}
		sum := sha256.Sum256(content)
		files = append(files, File{Version: version, Name: m[2], SQL: string(content), SHA256: hex.EncodeToString(sum[:])})
	}
	slices.SortFunc(files, func(a, b File) int { return a.Version - b.Version })
	for i := 1; i < len(files); i++ {
		if files[i].Version == files[i-1].Version {
			return nil, fmt.Errorf("migrations %s/%s and %s/%s share version %04d",
				dialect, files[i-1].Filename(), dialect, files[i].Filename(), files[i].Version)
		}
	}
	return files, nil
}

// advisoryLockKey is the pg_advisory_lock key serialising migration runs of
// hubs sharing a PostgreSQL database ("netmon" in ASCII).
const advisoryLockKey int64 = 0x6e65746d6f6e

// querier is what the runner needs: *sql.DB (SQLite) or *sql.Conn (the
// PostgreSQL session holding the advisory lock).
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

// Apply brings the database up to date: it creates schema_migrations when
// missing, refuses to go on if an applied file changed or if the database
// holds a version this binary does not know (a downgrade), then applies the
// pending files in version order, each in its own transaction together with
// its schema_migrations row. It returns how many files it applied.
//
// On SQLite, db must be the single-connection write pool (whose IMMEDIATE
// transactions serialise writers, other processes included). On PostgreSQL
// the whole run holds a session-level pg_advisory_lock, so hubs starting
// together apply each file once.
func Apply(ctx context.Context, db *sql.DB, dialect string, log *slog.Logger) (applied int, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	files, err := Files(dialect)
	if err != nil {
		return 0, err
	}
	if dialect != "postgres" {
		return apply(ctx, db, dialect, files, log)
	}

	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("get connection for migrations: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, advisoryLockKey); err != nil {
		return 0, fmt.Errorf("take migration lock: %w", err)
	}
	defer func() {
		// Unlock even when ctx is cancelled; if that fails, discard the
		// session, which releases the lock with it.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, uerr := conn.ExecContext(uctx, `SELECT pg_advisory_unlock($1)`, advisoryLockKey); uerr != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return apply(ctx, conn, dialect, files, log)
}

// record is a schema_migrations row.
type record struct {
	version int
	name    string
	sha256  string
}

func apply(ctx context.Context, q querier, dialect string, files []File, log *slog.Logger) (int, error) {
	const create = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at BIGINT NOT NULL,
		sha256     TEXT NOT NULL
	)`
	if _, err := q.ExecContext(ctx, create); err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	done, err := appliedRecords(ctx, q)
	if err != nil {
		return 0, err
	}
	if err := check(dialect, files, done); err != nil {
		return 0, err
	}

	applied := 0
	for _, f := range files {
		if _, ok := done[f.Version]; ok {
			continue
		}
		start := time.Now()
		ran, err := applyOne(ctx, q, f)
		if err != nil {
			return applied, fmt.Errorf("apply migration %s/%s: %w", dialect, f.Filename(), err)
		}
		if ran {
			applied++
			log.Info("migration applied", "version", f.Version, "name", f.Name, "duration", time.Since(start))
		}
	}
	return applied, nil
}

// appliedRecords reads schema_migrations.
func appliedRecords(ctx context.Context, q querier) (map[int]record, error) {
	rows, err := q.QueryContext(ctx, `SELECT version, name, sha256 FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	done := make(map[int]record)
	for rows.Next() {
		var r record
		if err := rows.Scan(&r.version, &r.name, &r.sha256); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		done[r.version] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return done, nil
}

// check compares what the database has applied with the embedded files.
func check(dialect string, files []File, done map[int]record) error {
	byVersion := make(map[int]File, len(files))
	latest := 0
	for _, f := range files {
		byVersion[f.Version] = f
		latest = max(latest, f.Version)
	}
	versions := make([]int, 0, len(done))
	for v := range done {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	for _, v := range versions {
		r := done[v]
		f, ok := byVersion[v]
		switch {
		case !ok && v > latest:
			return fmt.Errorf("database has migration %04d_%s.sql, newer than this binary (latest %04d): refusing to start, run a newer netmon", v, r.name, latest)
		case !ok:
			return fmt.Errorf("database has migration %04d_%s.sql, unknown to this binary: refusing to start", v, r.name)
		case r.sha256 != f.SHA256 || r.name != f.Name:
			return fmt.Errorf("migration %s/%s changed after it was applied (recorded %04d_%s.sql sha256 %s, embedded sha256 %s): refusing to start",
				dialect, f.Filename(), v, r.name, r.sha256, f.SHA256)
		}
	}
	return nil
}

// applyOne runs f and records it in one transaction. It re-reads
// schema_migrations inside the transaction: on SQLite another process may
// have applied f since the check (the IMMEDIATE transaction now excludes
// it), in which case it reports ran=false.
func applyOne(ctx context.Context, q querier, f File) (ran bool, err error) {
	tx, err := q.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil || !ran {
			_ = tx.Rollback()
		}
	}()
	var sum string
	err = tx.QueryRowContext(ctx, `SELECT sha256 FROM schema_migrations WHERE version = $1`, f.Version).Scan(&sum)
	switch {
	case err == nil && sum == f.SHA256:
		return false, nil
	case err == nil:
		return false, fmt.Errorf("applied concurrently with a different sha256 %s", sum)
	case !errors.Is(err, sql.ErrNoRows):
		return false, err
	}
	if _, err := tx.ExecContext(ctx, f.SQL); err != nil {
		return false, err
	}
	const insert = `INSERT INTO schema_migrations (version, name, applied_at, sha256) VALUES ($1, $2, $3, $4)`
	if _, err := tx.ExecContext(ctx, insert, f.Version, f.Name, time.Now().Unix(), f.SHA256); err != nil {
		return false, fmt.Errorf("record: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("commit: %w", err)
	}
	return true, nil
}
