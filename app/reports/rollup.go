package reports

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
)

// The report rollup job (issue 31 figure): every closed UTC day is
// pre-aggregated once into the report rollup tables (store migration
// 0023, exactness rule there), so a 30- or 90-day report reads the
// rolled days instead of millions of raw rows. The store's Report*
// reads use a day's rollup once it exists and read everything else
// live, so a report is right before, during and after a pass; the job
// only makes it fast. Safe on every hub sharing a database: a day's
// bookkeeping row is written in the transaction that writes its rows,
// so no day is rolled twice.

// RollupConfig tunes the rollup job.
type RollupConfig struct {
	// Every is the time between passes (default one hour); the first
	// pass runs at Start.
	Every time.Duration
	// MaxDays bounds the days one pass rolls up, newest first (default
	// 31: a month of history is caught up in one pass, 90 days in three).
	MaxDays int
	// Timeout bounds a pass (default 10 minutes).
	Timeout time.Duration
	// KeepDays is how long the rollups are kept, whatever -retention-hours
	// says of the raw rows (default 190: a 90-day report compares with
	// the 90 days before it).
	KeepDays int
}

// DefaultRollupConfig returns the defaults of RollupConfig.
func DefaultRollupConfig() RollupConfig {
	return RollupConfig{Every: time.Hour, MaxDays: 31, Timeout: 10 * time.Minute, KeepDays: 190}
}

// RollupStore is what the job needs of the store (*store.DB).
type RollupStore interface {
	ReportRollupPending(ctx context.Context, now int64, limit int) ([]int64, error)
	RollupReportDay(ctx context.Context, day, now int64) (bool, error)
}

// Rollup is the rollup job. Build it with NewRollup.
type Rollup struct {
	log   *slog.Logger
	cfg   RollupConfig
	store RollupStore
	now   func() time.Time
	guard *panics.Guard

	mu         sync.Mutex
	stop, done chan struct{}
}

// NewRollup returns the job over st; now is the clock (time.Now when
// nil); reg takes the loop's panic counter (nil: not registered).
func NewRollup(log *slog.Logger, cfg RollupConfig, st RollupStore, now func() time.Time, reg prometheus.Registerer) *Rollup {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	def := DefaultRollupConfig()
	if cfg.Every <= 0 {
		cfg.Every = def.Every
	}
	if cfg.MaxDays <= 0 {
		cfg.MaxDays = def.MaxDays
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = def.Timeout
	}
	if now == nil {
		now = time.Now
	}
	return &Rollup{log: log, cfg: cfg, store: st, now: now, guard: panics.New(reg, log, "report_rollup")}
}

// RunOnce rolls up the closed days not rolled up yet, newest first, at
// most MaxDays; it returns how many it rolled.
func (r *Rollup) RunOnce(ctx context.Context) (int, error) {
	now := r.now().Unix()
	days, err := r.store.ReportRollupPending(ctx, now, r.cfg.MaxDays)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range days {
		start := time.Now()
		ok, err := r.store.RollupReportDay(ctx, d, now)
		if err != nil {
			return n, err
		}
		if ok {
			n++
			r.log.Debug("report day rolled up", "day", time.Unix(d, 0).UTC().Format(time.DateOnly), "took", time.Since(start))
		}
	}
	return n, nil
}

// Start runs a pass now and then every Every, until Stop. A panic in a
// pass is recovered, logged and counted
// (netmon_panics_total{component="report_rollup"}) and the loop goes on.
func (r *Rollup) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop != nil {
		return errors.New("start report rollup: already started")
	}
	if r.store == nil {
		return errors.New("start report rollup: no store")
	}
	r.stop, r.done = make(chan struct{}), make(chan struct{})
	go func(stop, done chan struct{}) {
		defer close(done)
		r.guard.Keep(stop, func() { r.loop(stop) })
	}(r.stop, r.done)
	r.log.Info("report rollup started", "every", r.cfg.Every, "max_days", r.cfg.MaxDays)
	return nil
}

// Stop ends the loop and waits for a running pass to return (its
// context is cancelled: a day half read is simply not written).
func (r *Rollup) Stop() error {
	r.mu.Lock()
	stop, done := r.stop, r.done
	r.stop, r.done = nil, nil
	r.mu.Unlock()
	if stop == nil {
		return nil
	}
	close(stop)
	<-done
	return nil
}

func (r *Rollup) loop(stop <-chan struct{}) {
	t := time.NewTicker(r.cfg.Every)
	defer t.Stop()
	for {
		r.pass(stop)
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// pass is one RunOnce bounded by Timeout and cancelled by stop.
func (r *Rollup) pass(stop <-chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), r.cfg.Timeout)
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	n, err := r.RunOnce(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		r.log.Warn("report rollup failed", "rolled", n, "err", err)
	case n > 0:
		r.log.Info("report days rolled up", "days", n)
	}
}
