package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
)

// RetentionConfig configures the purge of raw time-series rows.
type RetentionConfig struct {
	// Hours is how long raw rows are kept: a run deletes the rows whose
	// timestamp is older than now minus Hours. Must be positive.
	Hours int
	// Interval is the time between two runs. Must be positive.
	Interval time.Duration
	// Enabled runs the purge in the background after Start. When false,
	// Start starts nothing; RunOnce still works (for an admin command).
	Enabled bool
}

// DefaultRetentionConfig returns the default retention: seven days of raw
// rows, purged every ten minutes.
func DefaultRetentionConfig() RetentionConfig {
	return RetentionConfig{Hours: 168, Interval: 10 * time.Minute, Enabled: true}
}

const (
	// retentionBatch is the number of rows one DELETE removes. On SQLite
	// each statement holds the write lock; small batches let the ingest
	// writers in between, so a large backlog never stalls them for long.
	retentionBatch = 5000
	// retentionFirstRun is the longest wait before the first run after
	// Start (shorter when Interval is): late enough not to compete with
	// the hub's start, soon enough that a hub restarted more often than
	// Interval still purges.
	retentionFirstRun = time.Minute
)

// identifier is what Register accepts as a table or column name: lower-case
// SQL identifiers only, so names can be put in SQL text safely.
var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// retentionTable is a registered table and its batch DELETE statement.
// A table stored by day (flow_days.go) has its expired days dropped whole;
// query then purges its default table only.
type retentionTable struct {
	name  string
	query string
	byDay bool
	// dayCutoff purges up to the start of the cutoff's day, so that
	// flow_hour_state keeps the hours of the days kept whole.
	dayCutoff bool
	// keep is the table's own minimum age before rows go (0: the
	// retention's).
	keep time.Duration
}

// Retention deletes expired rows from the raw time-series tables that other
// packages register. It is a component: NewRetention, Register, then Start
// and Stop.
type Retention struct {
	// IsLeader says whether this replica purges (the leader when several
	// hubs share a database); nil: always. Set before Start.
	IsLeader func() bool
	// guard recovers a panic of the purge loop (netmon_panics_total
	// {component="retention"}) and runs it again.
	guard   *panics.Guard
	log     *slog.Logger
	cfg     RetentionConfig
	db      *DB
	metrics *retentionMetrics

	// maxHold is the longest single write of the runs so far (a batch
	// DELETE, a day's drop), in nanoseconds: on SQLite, the longest the
	// write lock was held from ingest (for the benchmark).
	maxHold atomic.Int64

	mu      sync.Mutex
	tables  []retentionTable
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewRetention returns a Retention purging tables of db. It does no work.
// log should carry component=retention (app/hub adds it); nil discards.
// Its metrics are registered on reg unless reg is nil; like any collector
// they can be registered once per Registerer (a second Retention on the
// same one panics).
func NewRetention(log *slog.Logger, cfg RetentionConfig, db *DB, reg prometheus.Registerer) *Retention {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Retention{
		log:     log,
		cfg:     cfg,
		db:      db,
		metrics: newRetentionMetrics(reg),
		guard:   panics.New(reg, log, "retention"),
	}
}

// Register adds a table to purge: rows whose tsColumn (Unix seconds) is
// older than the retention are deleted. Both names must match
// ^[a-z_][a-z0-9_]*$; a table may be registered once, and only before
// Start. On SQLite the table must have a rowid (no WITHOUT ROWID).
func (r *Retention) Register(table, tsColumn string) error {
	return r.RegisterKeeping(table, tsColumn, 0)
}

// RegisterKeeping is Register for a table whose rows are kept at least
// keep, however short the retention is: the report rollups, a day's sums
// that a 90-day report (and its previous 90 days) reads long after the
// raw rows are gone. 0 is the retention itself.
func (r *Retention) RegisterKeeping(table, tsColumn string, keep time.Duration) error {
	for _, id := range []string{table, tsColumn} {
		if !identifier.MatchString(id) || len(id) > 63 {
			return fmt.Errorf("register retention table %q: invalid identifier %q", table, id)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return fmt.Errorf("register retention table %q: retention already started", table)
	}
	for _, t := range r.tables {
		if t.name == table {
			return fmt.Errorf("register retention table %q: already registered", table)
		}
	}
	// The subquery picks one batch by the cheapest row address of each
	// engine; with an index on tsColumn both plans touch only that batch.
	rowAddr := "rowid"
	if r.db.Dialect() == Postgres {
		rowAddr = "ctid"
	}
	byDay := slices.Contains(flowDayTables, table)
	target := table
	if byDay {
		// The days are dropped whole; the default table row by row.
		target += "_default"
		r.metrics.droppedDays.WithLabelValues(table)
	}
	query := fmt.Sprintf(`DELETE FROM "%[1]s" WHERE %[3]s IN (SELECT %[3]s FROM "%[1]s" WHERE "%[2]s" < $1 LIMIT %[4]d)`,
		target, tsColumn, rowAddr, retentionBatch)
	r.tables = append(r.tables, retentionTable{name: table, query: query, byDay: byDay, dayCutoff: table == "flow_hour_state", keep: keep})
	// Export the series at zero from the start.
	r.metrics.deletedRows.WithLabelValues(table)
	r.metrics.errors.WithLabelValues(table)
	return nil
}

// Start starts the background purge when enabled: a first run after
// Interval or one minute, whichever is shorter, then one every Interval.
// After Start, Register is refused.
func (r *Retention) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started {
		return errors.New("start retention: already started")
	}
	if !r.cfg.Enabled {
		r.started = true
		r.log.Info("retention disabled")
		return nil
	}
	if r.cfg.Hours <= 0 || r.cfg.Interval <= 0 {
		return fmt.Errorf("start retention: hours (%d) and interval (%s) must be positive", r.cfg.Hours, r.cfg.Interval)
	}
	r.started = true
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.done = make(chan struct{})
	go func(done chan<- struct{}) {
		defer close(done)
		first := min(r.cfg.Interval, retentionFirstRun)
		r.guard.Keep(ctx.Done(), func() {
			f := first
			first = r.cfg.Interval // after a panic, the next run one Interval on
			r.loop(ctx, f)
		})
	}(r.done)
	r.log.Info("retention started", "hours", r.cfg.Hours, "interval", r.cfg.Interval, "tables", len(r.tables))
	return nil
}

// Stop stops the background purge, cancelling a run in progress, and
// waits for it to end. It is a no-op when nothing runs.
func (r *Retention) Stop() error {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.cancel, r.done = nil, nil
	r.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-done
	return nil
}

// running tells whether the background loop is active (for tests).
func (r *Retention) running() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done != nil
}

func (r *Retention) loop(ctx context.Context, first time.Duration) {
	timer := time.NewTimer(first)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		// RunOnce logs and counts its failures; the next run retries. A
		// replica that does not lead leaves the purge to the one that does.
		if r.IsLeader == nil || r.IsLeader() {
			_, _ = r.RunOnce(ctx)
		}
		timer.Reset(r.cfg.Interval)
	}
}

// RunOnce purges every registered table once and returns the number of
// rows deleted per table (for a table stored by day, the rows of its
// default table: its whole days dropped are counted in
// netmon_retention_dropped_days_total). A failing table does not stop the others: its
// failure is logged and counted, and RunOnce returns all failures joined.
func (r *Retention) RunOnce(ctx context.Context) (map[string]int64, error) {
	if r.cfg.Hours <= 0 {
		return nil, fmt.Errorf("run retention: hours must be positive, got %d", r.cfg.Hours)
	}
	r.mu.Lock()
	tables := r.tables[:len(r.tables):len(r.tables)]
	r.mu.Unlock()

	start := time.Now()
	cutoff := start.Add(-time.Duration(r.cfg.Hours) * time.Hour).Unix()
	deleted := make(map[string]int64, len(tables))
	var errs []error
	for _, t := range tables {
		if t.byDay {
			days, hold, err := r.db.pruneFlowDays(ctx, t.name, start.Unix(), cutoff)
			r.held(hold)
			r.metrics.droppedDays.WithLabelValues(t.name).Add(float64(days))
			if days > 0 {
				r.log.Info("days dropped", "table", t.name, "days", days, "cutoff", cutoff)
			}
			if err != nil && ctx.Err() == nil {
				r.metrics.errors.WithLabelValues(t.name).Inc()
				r.log.Warn("drop of expired days failed", "table", t.name, "dropped", days, "error", err)
				errs = append(errs, fmt.Errorf("purge table %s: %w", t.name, err))
			}
		}
		tcut := cutoff
		if t.keep > 0 {
			tcut = min(tcut, start.Add(-t.keep).Unix())
		}
		if t.dayCutoff {
			tcut -= tcut % 86400
		}
		n, err := r.purge(ctx, t, tcut)
		deleted[t.name] = n
		r.metrics.deletedRows.WithLabelValues(t.name).Add(float64(n))
		if err != nil && ctx.Err() != nil {
			// Stopping, not failing.
			errs = append(errs, fmt.Errorf("purge table %s: %w", t.name, ctx.Err()))
			break
		}
		if err != nil {
			r.metrics.errors.WithLabelValues(t.name).Inc()
			r.log.Warn("purge failed", "table", t.name, "deleted", n, "error", err)
			errs = append(errs, fmt.Errorf("purge table %s: %w", t.name, err))
			continue
		}
		if n > 0 {
			r.log.Info("rows purged", "table", t.name, "deleted", n, "cutoff", cutoff)
		}
	}
	r.metrics.runDuration.Observe(time.Since(start).Seconds())
	r.metrics.lastRun.SetToCurrentTime()
	return deleted, errors.Join(errs...)
}

// purge deletes t's rows older than cutoff, one batch per statement (each
// its own transaction), until a batch comes back short.
func (r *Retention) purge(ctx context.Context, t retentionTable, cutoff int64) (int64, error) {
	var total int64
	for {
		began := time.Now()
		res, err := r.db.ExecBulk(ctx, t.query, cutoff)
		r.held(time.Since(began))
		if err != nil {
			return total, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += n
		if n < retentionBatch {
			return total, nil
		}
	}
}

// held records a write's duration into maxHold.
func (r *Retention) held(d time.Duration) {
	for {
		cur := r.maxHold.Load()
		if int64(d) <= cur || r.maxHold.CompareAndSwap(cur, int64(d)) {
			return
		}
	}
}
