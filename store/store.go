// Package store is the persistence layer of the hub: it opens the database
// (embedded SQLite or PostgreSQL), applies the embedded schema migrations
// (package store/migrations) and holds one file per stored entity, with the
// SQL of each method written beside it.
//
// The package sits below every service: it knows nothing of HTTP,
// collectors or alerting, and the services reach it through the small
// interfaces they declare. app/hub builds it with Open and hands it in.
//
// All SQL in the project is written once, with PostgreSQL's $1, $2, ...
// placeholders: modernc.org/sqlite accepts the same numbered parameters
// (in any order, repeated or not), so a statement only needs a dialect
// override (a *_sqlite.go / *_postgres.go file) when the two engines
// genuinely disagree on syntax. Timestamps are stored as Unix seconds in
// BIGINT columns, which both engines compare and index the same way.
//
// On SQLite the DB holds two pools over the same file: a write pool of a
// single connection whose transactions begin IMMEDIATE (writers queue in
// Go rather than fail with SQLITE_BUSY on a lock upgrade), and a read pool
// of Config.MaxConns read-only connections that WAL lets run beside the
// writer. On PostgreSQL both are the same pool.
//
// The flow tables (flow_minutes, flow_hours) are stored by UTC day so that
// retention drops a whole expired day instead of deleting its rows one by
// one: PostgreSQL partitions by range of ts with a DEFAULT partition,
// SQLite one table per day behind a UNION ALL view of the old name. The
// readers' SQL is the same on both; see flow_days.go.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"netmon/store/migrations"
)

// ErrNotFound is returned (wrapped) by store methods when the requested row
// does not exist. Callers test it with errors.Is.
var ErrNotFound = errors.New("not found")

// defaultPingTimeout bounds Ping when the caller's context has no deadline,
// so a readiness probe never hangs on an unreachable server.
const defaultPingTimeout = 5 * time.Second

// DB is an open database: its pools, its dialect and the redacted DSN.
// It is safe for concurrent use.
type DB struct {
	log      *slog.Logger
	dialect  Dialect
	redacted string
	reader   *sql.DB
	writer   *sql.DB // == reader on PostgreSQL
	// lane orders SQLite's writers (nil on PostgreSQL); see lane.go.
	lane *lane
	// days caches the flow tables' day tables known to exist (flow_days.go).
	days flowDays
}

// Open opens the database named by cfg.DSN, choosing the dialect from its
// form, checks that it answers and applies the pending migrations. log
// should carry the caller's component attribute; nil discards. The
// returned DB must be closed with Close.
func Open(ctx context.Context, log *slog.Logger, cfg Config) (*DB, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxConns <= 0 {
		return nil, fmt.Errorf("open database: MaxConns must be positive, got %d", cfg.MaxConns)
	}
	dialect, err := dialectOf(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	// The caller names the component (app/hub passes component=store).
	log = log.With("dialect", string(dialect))

	var db *DB
	switch dialect {
	case SQLite:
		db, err = openSQLite(ctx, cfg)
	case Postgres:
		db, err = openPostgres(ctx, cfg)
	}
	if err != nil {
		return nil, err
	}
	db.log = log

	applied, err := migrations.Apply(ctx, db.writer, string(dialect), log)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("migrate %s database %q: %w", dialect, db.redacted, err)
	}
	log.Debug("database opened", "dsn", db.redacted, "migrations_applied", applied)
	return db, nil
}

// dialectOf tells SQLite from PostgreSQL by the DSN's form.
func dialectOf(dsn string) (Dialect, error) {
	lower := strings.ToLower(dsn)
	switch {
	case dsn == "":
		return "", errors.New("empty DSN")
	case strings.HasPrefix(lower, "postgres://"), strings.HasPrefix(lower, "postgresql://"):
		return Postgres, nil
	case strings.Contains(dsn, "://"):
		// A typo'd or unsupported scheme must not silently become a
		// SQLite file named "mysql:/...".
		return "", fmt.Errorf("unsupported database URL %q: want postgres:// or a SQLite file path", redactDSN(dsn))
	default:
		return SQLite, nil
	}
}

// Dialect returns the engine behind the DB.
func (db *DB) Dialect() Dialect { return db.dialect }

// Reader returns the pool for queries. On SQLite its connections are
// read-only (PRAGMA query_only): writes must go through Writer.
func (db *DB) Reader() *sql.DB { return db.reader }

// Writer returns the pool for writes: on SQLite a single connection whose
// transactions begin IMMEDIATE, on PostgreSQL the same pool as Reader.
func (db *DB) Writer() *sql.DB { return db.writer }

// Redacted returns the DSN with any password hidden, for logs.
func (db *DB) Redacted() string { return db.redacted }

// Ping checks that the database answers, for readiness probes. It returns
// within the context's deadline, or within five seconds when the context
// has none.
func (db *DB) Ping(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultPingTimeout)
		defer cancel()
	}
	if err := db.reader.PingContext(ctx); err != nil {
		return fmt.Errorf("ping %s database: %w", db.dialect, err)
	}
	return nil
}

// Close closes the pools. On SQLite the writer is closed last so that its
// connection, the last one on the file, checkpoints the WAL.
func (db *DB) Close() error {
	if db.writer == db.reader {
		return db.reader.Close()
	}
	return errors.Join(db.reader.Close(), db.writer.Close())
}

// Collectors returns a Prometheus collector of database/sql pool statistics
// for each distinct pool, labelled db_name "write" and "read" on SQLite and
// "main" on PostgreSQL. The caller registers them.
func (db *DB) Collectors() []prometheus.Collector {
	if db.writer == db.reader {
		return []prometheus.Collector{collectors.NewDBStatsCollector(db.reader, "main")}
	}
	return []prometheus.Collector{
		collectors.NewDBStatsCollector(db.writer, "write"),
		collectors.NewDBStatsCollector(db.reader, "read"),
	}
}

// InTx runs fn in a write transaction on the writer and commits it when
// fn returns nil; otherwise (or if fn panics) it rolls back and returns
// fn's error unchanged. It is the one way to write in a transaction:
// entity methods that must commit together (a change and its audit
// record) are methods of *Tx, and a statement of the store's own uses
// Tx.SQL. On SQLite the writer has a single connection, so fn must use
// the Tx for every write: calling another DB write method from fn would
// wait for the connection fn holds.
//
// It writes as a priority writer: on SQLite it goes before bulk ingest
// (see lane.go).
func (db *DB) InTx(ctx context.Context, fn func(*Tx) error) error {
	release, err := db.take(ctx, true)
	if err != nil {
		return err
	}
	defer release()
	return db.withTx(ctx, func(tx *sql.Tx) error { return fn(&Tx{tx: tx, dialect: db.dialect}) })
}

// withTx is InTx on the bare transaction, for a caller that holds the
// lane already (bulk ingest).
func (db *DB) withTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			// Rollback after a failed Commit reports ErrTxDone:
			// nothing left to undo.
			_ = tx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	committed = true
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}
