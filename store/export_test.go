package store

import (
	"context"
	"time"
)

// Running reports whether r's background loop is active.
func Running(r *Retention) bool { return r.running() }

// SetFlowDayHook sets the hook run between a SQLite day table's drop and
// its view's rebuild; the returned func removes it.
func SetFlowDayHook(fn func() error) func() {
	flowDayHook = fn
	return func() { flowDayHook = nil }
}

// MaxHold returns the longest single write of r's runs so far and resets it.
func MaxHold(r *Retention) time.Duration { return time.Duration(r.maxHold.Swap(0)) }

// DropFlowDays drops parent's days that ended at or before cutoff.
func DropFlowDays(ctx context.Context, db *DB, parent string, cutoff int64) (int, error) {
	n, _, err := db.dropFlowDays(ctx, parent, cutoff)
	return n, err
}
