package store

// Flow tables by day (issue 16): flow_minutes and flow_hours grow by a
// million rows a day and more at real-world cardinality, and deleting them
// one by one when they expire costs as much as writing them did (every
// index entry removed, the write lock held batch after batch). They are
// therefore stored one table per UTC day, and retention drops a whole day
// once all of it is older than the cutoff: a catalogue change, whatever the
// day's size. A day is thus kept up to 24 hours longer than the retention
// says; the rest of the raw tables are still purged row by row.
//
// PostgreSQL: flow_minutes and flow_hours are range-partitioned on ts, one
// partition per day (<parent>_dYYYYMMDD; after the upgrade, the old table
// is the partition of every day up to the upgrade's, named after that
// last day, and dropped when it expires), plus <parent>_default, the
// DEFAULT partition. Partitions are created ahead by the writer (each day
// it writes, before the write) and by the retention run (today and the
// two days after), so ingest lands in its day; the DEFAULT partition is
// the safety net that makes an insert never fail for a missing partition
// (a direct INSERT, a race with a drop). Creating a day moves that day's
// rows out of the DEFAULT partition first. Readers use the parent, whose
// name did not change. Expired partitions are dropped under lock_timeout,
// so a long query on the parent delays the drop (retried at the next run)
// instead of queueing every writer behind it.
//
// SQLite has no partitions: each day is a table <parent>_dYYYYMMDD with
// the parent's indexes, and <parent> is a view, the UNION ALL of
// <parent>_default and every day table, rebuilt in the same transaction
// that creates or drops a table (SQLite's DDL is transactional, so a crash
// never leaves a view naming a dropped table). The readers' SQL is
// unchanged: SQLite pushes their ts filter into each branch of the view,
// which then searches that table's ts index. The writer inserts into the
// day tables directly; an INSERT into the view goes to <parent>_default
// through an INSTEAD OF trigger (what PostgreSQL's DEFAULT partition does).
// A view has at most 500 branches (SQLITE_MAX_COMPOUND_SELECT): about 16
// months of retention.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// flowDayTables are the tables stored by day.
var flowDayTables = []string{"flow_minutes", "flow_hours"}

// flowDayIndexes are each day table's indexes (name suffix, columns), the
// ones 0011 gave the tables.
var flowDayIndexes = map[string][][2]string{
	"flow_minutes": {{"ts", "ts"}, {"pair", "src, dst, ts"}},
	"flow_hours":   {{"ts", "ts"}},
}

// flowDayLockClass is the first key of the PostgreSQL advisory lock that
// serialises the creation of one day's partitions between hubs.
const flowDayLockClass = 17

// flowDayLockTimeout bounds how long a partition's creation or drop waits
// for its locks on PostgreSQL: past it the statement fails (retried later)
// rather than hold every writer queued behind its lock request.
const flowDayLockTimeout = "1s"

// flowDayHook, when set (tests), runs inside the transaction that drops a
// SQLite day table, between the drop and the view's rebuild.
var flowDayHook func() error

// flowDays caches which day tables exist, so that a write looks them up
// only when it meets a new day. gen counts drops: a table learned by a
// transaction that began before a drop is not cached.
type flowDays struct {
	mu    sync.Mutex
	gen   uint64
	known map[string]bool
	// failed is when the creation of a PostgreSQL partition last failed
	// (its locks not granted in time): the writer does not try it again
	// for a minute, its rows going to the DEFAULT partition meanwhile.
	failed map[string]time.Time
}

// recentFailure tells whether name's creation failed less than a minute
// ago; with failed set it records a failure now.
func (f *flowDays) recentFailure(name string, failed bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if failed {
		if f.failed == nil {
			f.failed = map[string]time.Time{}
		}
		f.failed[name] = time.Now()
		return true
	}
	at, ok := f.failed[name]
	return ok && time.Since(at) < time.Minute
}

func (f *flowDays) has(name string) (bool, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.known[name], f.gen
}

func (f *flowDays) learn(names []string, gen uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gen != gen {
		return
	}
	if f.known == nil {
		f.known = map[string]bool{}
	}
	for _, n := range names {
		f.known[n] = true
	}
}

// forget empties the cache (after a drop or a failed write).
func (f *flowDays) forget() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gen++
	f.known = nil
}

// FlowDayTable returns the name of parent's table (or partition) holding
// the UTC day of ts.
func FlowDayTable(parent string, ts int64) string {
	return parent + "_d" + time.Unix(ts-ts%86400, 0).UTC().Format("20060102")
}

// flowDayOf parses a day table's name back into its day's start, or false.
func flowDayOf(parent, name string) (int64, bool) {
	s, ok := strings.CutPrefix(name, parent+"_d")
	if !ok || len(s) != 8 {
		return 0, false
	}
	t, err := time.Parse("20060102", s)
	if err != nil {
		return 0, false
	}
	return t.Unix(), true
}

// FlowDays returns the starts of the days parent has a table (partition)
// for, in order.
func (db *DB) FlowDays(ctx context.Context, parent string) ([]int64, error) {
	return flowDayList(ctx, db.reader, db.dialect, parent)
}

func flowDayList(ctx context.Context, q flowQuerier, d Dialect, parent string) ([]int64, error) {
	query := `SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE $1`
	arg := any(parent + "\\_d%")
	if d == Postgres {
		query = `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass($1)`
		arg = parent
	} else {
		query += ` ESCAPE '\'`
	}
	rows, err := q.QueryContext(ctx, query, arg)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var days []int64
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		if day, ok := flowDayOf(parent, name); ok {
			days = append(days, day)
		}
	}
	slices.Sort(days)
	return days, rows.Err()
}

// EnsureFlowDays creates the day tables (partitions) of both flow tables
// for every UTC day from from to to (Unix seconds) that lacks one. The
// retention run calls it ahead of time; the writer for the days it writes.
func (db *DB) EnsureFlowDays(ctx context.Context, from, to int64) error {
	for day := from - from%86400; day <= to; day += 86400 {
		for _, parent := range flowDayTables {
			if err := db.ensureFlowDay(ctx, parent, day); err != nil {
				return fmt.Errorf("create flow day %s: %w", FlowDayTable(parent, day), err)
			}
		}
	}
	return nil
}

func (db *DB) ensureFlowDay(ctx context.Context, parent string, day int64) error {
	name := FlowDayTable(parent, day)
	if ok, _ := db.days.has(name); ok {
		return nil
	}
	if db.dialect == SQLite {
		release, err := db.take(ctx, false)
		if err != nil {
			return err
		}
		defer release()
		var learned []string
		_, gen := db.days.has(name)
		err = db.withTx(ctx, func(tx *sql.Tx) error {
			var err error
			learned, err = ensureSQLiteDays(ctx, tx, &db.days, parent, []int64{day})
			return err
		})
		if err == nil {
			db.days.learn(learned, gen)
		}
		return err
	}
	if db.days.recentFailure(name, false) {
		return errFlowDayBackoff
	}
	_, gen := db.days.has(name)
	err := db.withTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, flowDayLockClass, int32(day/86400)); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil || exists {
			return err
		}
		// The day's rows that went to the DEFAULT partition meanwhile
		// move into the new table, which ATTACH would refuse otherwise.
		// Names are ours (FlowDayTable of a constant), never input.
		for _, q := range []string{
			`SET LOCAL lock_timeout = '` + flowDayLockTimeout + `'`,
			`CREATE TABLE ` + name + ` (LIKE ` + parent + ` INCLUDING DEFAULTS)`,
			fmt.Sprintf(`INSERT INTO %s SELECT * FROM %s_default WHERE ts >= %d AND ts < %d`, name, parent, day, day+86400),
			fmt.Sprintf(`DELETE FROM %s_default WHERE ts >= %d AND ts < %d`, parent, day, day+86400),
			fmt.Sprintf(`ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%d) TO (%d)`, parent, name, day, day+86400),
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P17" {
		// The day overlaps a partition already there: the one 0014 made
		// of the old table, covering every day up to its upgrade's. Its
		// rows go there; it is dropped whole when its last day expires.
		err = nil
	}
	if err != nil {
		db.days.recentFailure(name, true)
		return err
	}
	db.days.learn([]string{name}, gen)
	return nil
}

// errFlowDayBackoff: a partition's creation failed less than a minute ago.
var errFlowDayBackoff = errors.New("creation failed less than a minute ago")

// ensureFlowDayForWrite is ensureFlowDay for the writer on PostgreSQL,
// best effort: the write goes on whatever happens, its rows landing in
// the DEFAULT partition when the day's could not be created (a lock not
// granted within flowDayLockTimeout), to be moved when it is.
func (db *DB) ensureFlowDayForWrite(ctx context.Context, ts int64) {
	for _, parent := range flowDayTables {
		err := db.ensureFlowDay(ctx, parent, ts-ts%86400)
		if err != nil && !errors.Is(err, errFlowDayBackoff) && ctx.Err() == nil {
			db.log.Warn("flow day partition not created; rows go to the default partition", "table", FlowDayTable(parent, ts), "error", err)
		}
	}
}

// ensureSQLiteDays creates, within tx, parent's tables of days that lack
// one and then rebuilds parent's view; it returns the day tables that now
// exist, for the cache once tx commits.
func ensureSQLiteDays(ctx context.Context, tx *sql.Tx, cache *flowDays, parent string, days []int64) ([]string, error) {
	var names, missing []string
	for _, day := range days {
		name := FlowDayTable(parent, day)
		if slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
		if ok, _ := cache.has(name); ok {
			continue
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1`, name).Scan(&n); err != nil {
			return nil, err
		}
		if n == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return names, nil
	}
	for _, name := range missing {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE `+name+` (`+flowColumnsDDL+`)`); err != nil {
			return nil, err
		}
		for _, ix := range flowDayIndexes[parent] {
			if _, err := tx.ExecContext(ctx, `CREATE INDEX `+name+`_`+ix[0]+` ON `+name+` (`+ix[1]+`)`); err != nil {
				return nil, err
			}
		}
	}
	return names, rebuildFlowView(ctx, tx, parent)
}

// flowColumnsDDL is the columns of a flow table (0011_flow_append.sql).
const flowColumnsDDL = `ts BIGINT NOT NULL, exporter TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL,
	src_port INTEGER NOT NULL, dst_port INTEGER NOT NULL, proto INTEGER NOT NULL,
	packets BIGINT NOT NULL, octets BIGINT NOT NULL, flows BIGINT NOT NULL,
	first_seen BIGINT NOT NULL, last_seen BIGINT NOT NULL`

// rebuildFlowView replaces SQLite's view parent by the UNION ALL of
// parent_default and the day tables that exist in tx, and its INSTEAD OF
// INSERT trigger (dropped with the view) routing inserts to the default.
func rebuildFlowView(ctx context.Context, tx *sql.Tx, parent string) error {
	days, err := flowDayList(ctx, tx, SQLite, parent)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`CREATE VIEW ` + parent + ` AS SELECT ` + flowCols + ` FROM ` + parent + `_default`)
	for _, day := range days {
		b.WriteString(` UNION ALL SELECT ` + flowCols + ` FROM ` + FlowDayTable(parent, day))
	}
	news := `NEW.` + strings.ReplaceAll(flowCols, `, `, `, NEW.`)
	for _, q := range []string{
		`DROP VIEW IF EXISTS ` + parent,
		b.String(),
		`CREATE TRIGGER ` + parent + `_insert INSTEAD OF INSERT ON ` + parent + ` BEGIN INSERT INTO ` + parent + `_default (` + flowCols + `) VALUES (` + news + `); END`,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// dropFlowDays drops parent's day tables (partitions) whose day ended at
// or before cutoff, each in its own transaction (on SQLite with the
// view's rebuild), and returns how many it dropped and the longest of
// their transactions (the write lock's hold on SQLite). The day holding
// cutoff is kept whole, and so is any day being written: cutoff is at
// least an hour ago.
func (db *DB) dropFlowDays(ctx context.Context, parent string, cutoff int64) (int, time.Duration, error) {
	days, err := db.FlowDays(ctx, parent)
	if err != nil {
		return 0, 0, err
	}
	n := 0
	var hold time.Duration
	for _, day := range days {
		if day+86400 > cutoff {
			break
		}
		took, err := db.dropFlowDay(ctx, parent, day)
		hold = max(hold, took)
		if err != nil {
			return n, hold, fmt.Errorf("drop %s: %w", FlowDayTable(parent, day), err)
		}
		n++
	}
	return n, hold, nil
}

func (db *DB) dropFlowDay(ctx context.Context, parent string, day int64) (took time.Duration, err error) {
	name := FlowDayTable(parent, day)
	release, err := db.take(ctx, false)
	if err != nil {
		return 0, err
	}
	defer release()
	// Forgotten before (a write meanwhile looks the table up again) and
	// after (a write that cached it meanwhile is not believed).
	db.days.forget()
	defer db.days.forget()
	began := time.Now()
	defer func() { took = time.Since(began) }() // sets the result after return
	return 0, db.withTx(ctx, func(tx *sql.Tx) error {
		if db.dialect == Postgres {
			if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '`+flowDayLockTimeout+`'`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+name)
			return err
		}
		if _, err := tx.ExecContext(ctx, `DROP TABLE IF EXISTS `+name); err != nil {
			return err
		}
		if flowDayHook != nil {
			if err := flowDayHook(); err != nil {
				return err
			}
		}
		return rebuildFlowView(ctx, tx, parent)
	})
}

// errNoFlowDays is returned for a table that is not stored by day.
var errNoFlowDays = errors.New("not a table stored by day")

// pruneFlowDays is retention's run on a table stored by day: it creates
// the days ahead, drops the expired ones and returns how many it dropped
// and the longest drop's transaction.
func (db *DB) pruneFlowDays(ctx context.Context, parent string, now, cutoff int64) (int, time.Duration, error) {
	if !slices.Contains(flowDayTables, parent) {
		return 0, 0, errNoFlowDays
	}
	for day := now - now%86400; day <= now+2*86400; day += 86400 {
		if err := db.ensureFlowDay(ctx, parent, day); err != nil {
			return 0, 0, fmt.Errorf("create %s: %w", FlowDayTable(parent, day), err)
		}
	}
	return db.dropFlowDays(ctx, parent, cutoff)
}
