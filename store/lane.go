package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"
)

// lane orders the writers of SQLite's single write connection: people's
// writes (sessions, audit records, users, tokens, settings) go before bulk
// ingest (flows, syslog, telemetry, retention). Without it, database/sql
// hands the connection to a random waiter, and a login queued behind four
// ingest writers, each holding the connection for a second-long
// transaction, waited seconds (RELIABILITY case 32).
//
// Ingest writes in chunks and, between chunks, hands the lane over when a
// priority writer waits (see DB.ingest), so a person waits at most one
// chunk. PostgreSQL has no lane: its writers run concurrently.
//
// Between the two sits the alert engine's evaluation (RELIABILITY case
// 35): its events and repeats go after every person's write — a storm's
// thousands of inserts once held silences and configuration changes
// behind them — and before ingest, as they did when they were priority
// writes.
type lane struct {
	mu   sync.Mutex
	held bool
	// high, mid and low are the waiters (people, rule evaluation,
	// ingest), first come first served within each; a waiter's channel
	// is closed when the lane is handed to it.
	high, mid, low []chan struct{}
}

// Writer levels of the lane, highest first.
const (
	levelPeople = iota // sessions, audit, settings: InTx, exec
	levelRules         // the alert engine's evaluation writes
	levelIngest        // bulk ingest, retention
)

// acquire takes the lane, waiting behind every waiter of a higher or the
// same level that came first.
func (l *lane) acquire(ctx context.Context, priority bool) error {
	if priority {
		return l.acquireAt(ctx, levelPeople)
	}
	return l.acquireAt(ctx, levelIngest)
}

// queue returns the waiters of level.
func (l *lane) queue(level int) *[]chan struct{} {
	switch level {
	case levelPeople:
		return &l.high
	case levelRules:
		return &l.mid
	}
	return &l.low
}

// acquireAt is acquire for a writer of level.
func (l *lane) acquireAt(ctx context.Context, level int) error {
	l.mu.Lock()
	ahead := 0
	for lv := levelPeople; lv <= level; lv++ {
		ahead += len(*l.queue(lv))
	}
	if !l.held && (level == levelPeople || ahead == 0) {
		l.held = true
		l.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	q := l.queue(level)
	*q = append(*q, ch)
	l.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		i := slices.Index(*q, ch)
		if i >= 0 {
			*q = slices.Delete(*q, i, i+1)
		}
		l.mu.Unlock()
		if i < 0 {
			// Handed to us as we gave up: pass it on.
			l.release()
		}
		return fmt.Errorf("wait for the database writer: %w", ctx.Err())
	}
}

// release hands the lane to the first priority waiter, else the first
// rules waiter, else the first ingest waiter, else frees it.
func (l *lane) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	var next chan struct{}
	switch {
	case len(l.high) > 0:
		next, l.high = l.high[0], l.high[1:]
	case len(l.mid) > 0:
		next, l.mid = l.mid[0], l.mid[1:]
	case len(l.low) > 0:
		next, l.low = l.low[0], l.low[1:]
	default:
		l.held = false
		return
	}
	close(next)
}

// priorityWaiting reports whether a writer above ingest (a person or the
// rule evaluation) waits for the lane.
func (l *lane) priorityWaiting() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.high) > 0 || len(l.mid) > 0
}

// take acquires the lane when the database has one; the returned func
// releases it.
func (db *DB) take(ctx context.Context, priority bool) (func(), error) {
	if db.lane == nil {
		return func() {}, nil
	}
	if err := db.lane.acquire(ctx, priority); err != nil {
		return nil, err
	}
	return db.lane.release, nil
}

// takeAt is take for a writer of level.
func (db *DB) takeAt(ctx context.Context, level int) (func(), error) {
	if db.lane == nil {
		return func() {}, nil
	}
	if err := db.lane.acquireAt(ctx, level); err != nil {
		return nil, err
	}
	return db.lane.release, nil
}

// execRules runs one write statement of the alert engine's evaluation:
// after people's writes, before ingest.
func (db *DB) execRules(ctx context.Context, query string, args ...any) (sql.Result, error) {
	release, err := db.takeAt(ctx, levelRules)
	if err != nil {
		return nil, err
	}
	defer release()
	return db.writer.ExecContext(ctx, query, args...)
}

// exec runs one write statement outside a transaction, as a priority
// writer.
func (db *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	release, err := db.take(ctx, true)
	if err != nil {
		return nil, err
	}
	defer release()
	return db.writer.ExecContext(ctx, query, args...)
}

// ExecBulk runs one write statement as ingest does: behind every priority
// writer (retention's deletes).
func (db *DB) ExecBulk(ctx context.Context, query string, args ...any) (sql.Result, error) {
	release, err := db.take(ctx, false)
	if err != nil {
		return nil, err
	}
	defer release()
	return db.writer.ExecContext(ctx, query, args...)
}

// ingestSlice is the longest an ingest transaction runs: on SQLite it
// keeps the lane no longer even when no priority writer waits (one
// waiting is let in after the current chunk), bounding the write-ahead
// log's growth between commits; on both databases it bounds what one
// failure or deadline can undo. A burst of a million syslog records once
// went to PostgreSQL as one transaction, hit the 30 s write deadline and
// was dropped whole after the hub had accepted it.
const ingestSlice = 2 * time.Second

// ingest writes n items as bulk ingest, chunk items at a time: write(tx,
// from, to) writes items [from, to). Chunks share a transaction until a
// priority writer waits (SQLite) or ingestSlice has passed (both); then
// what is written so far commits, the lane is handed over, and the rest
// follows in a new transaction. It returns how
// many items are committed, also on error, so the caller can retry the
// rest only: a committed chunk is never written twice.
func (db *DB) ingest(ctx context.Context, n, chunk int, write func(tx *sql.Tx, from, to int) error) (int, error) {
	done := 0
	for done < n {
		release, err := db.take(ctx, false)
		if err != nil {
			return done, err
		}
		end := done
		began := time.Now()
		err = db.withTx(ctx, func(tx *sql.Tx) error {
			for end < n {
				to := min(end+chunk, n)
				if err := write(tx, end, to); err != nil {
					return err
				}
				end = to
				if time.Since(began) > ingestSlice || (db.lane != nil && db.lane.priorityWaiting()) {
					return nil
				}
			}
			return nil
		})
		release()
		if err != nil {
			return done, err
		}
		done = end
	}
	return done, nil
}
