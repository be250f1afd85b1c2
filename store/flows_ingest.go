package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// PartialError is returned by WriteFlowBatches when some of a batch's sums
// were committed before the database failed for good: retrying the batch
// would count those twice, so the caller must not (the ingest queue counts
// the batch as dropped). It can only happen on SQLite, where a flow write
// commits early to let a person's write in (see lane.go).
type PartialError struct{ Err error }

func (e *PartialError) Error() string {
	return "part of the batch committed, the rest failed: " + e.Err.Error()
}

func (e *PartialError) Unwrap() error { return e.Err }

// Partial marks the error for callers that cannot name this type.
func (e *PartialError) Partial() bool { return true }

// flowRetries and flowRetryDelay: after an early commit the sums left are
// retried here, since the caller cannot retry the batch.
const (
	flowRetries    = 3
	flowRetryDelay = 2 * time.Second
)

// writeFlowSums upserts the minute and then the hour sums as bulk ingest.
// On PostgreSQL (no lane) it is one transaction. On SQLite a priority
// writer that waits is let in after the current statement: what is
// written commits, its keys leave the maps, and the rest follows in a new
// transaction — so a later failure retries only the rest.
func (db *DB) writeFlowSums(ctx context.Context, minutes, hours map[flowKey]*flowSums) error {
	committed := false
	var err error
	for attempt := 0; ; attempt++ {
		var early bool
		early, err = db.upsertFlowSums(ctx, minutes, hours)
		committed = committed || early
		if err == nil {
			return nil
		}
		if !committed || attempt >= flowRetries || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(flowRetryDelay):
		}
	}
	if committed {
		return &PartialError{Err: err}
	}
	return err
}

// flowTx is the transaction of upsertFlowSums, replaced at each early
// commit.
type flowTx struct {
	db      *DB
	ctx     context.Context
	tx      *sql.Tx
	release func()
	began   time.Time
	stmts   map[string]*wideStmt // the upsert of each table
	// pending are the keys written since the last commit, by table.
	pending map[string][]flowKey
}

func (f *flowTx) begin() error {
	release, err := f.db.take(f.ctx, false)
	if err != nil {
		return err
	}
	tx, err := f.db.writer.BeginTx(f.ctx, nil)
	if err != nil {
		release()
		return err
	}
	f.tx, f.release, f.began = tx, release, time.Now()
	f.stmts = map[string]*wideStmt{}
	return nil
}

func (f *flowTx) end(commit bool) error {
	if f.tx == nil {
		return nil
	}
	for _, st := range f.stmts {
		st.Close()
	}
	var err error
	if commit {
		err = f.tx.Commit()
	} else {
		err = f.tx.Rollback()
	}
	f.tx = nil
	f.release()
	return err
}

// upsertFlowSums writes what is left in the maps. It reports whether it
// committed early (some keys written and gone from the maps).
func (db *DB) upsertFlowSums(ctx context.Context, minutes, hours map[flowKey]*flowSums) (early bool, err error) {
	f := &flowTx{db: db, ctx: ctx, pending: map[string][]flowKey{}}
	if err := f.begin(); err != nil {
		return false, err
	}
	tables := []struct {
		name string
		agg  map[flowKey]*flowSums
	}{{"flow_minutes", minutes}, {"flow_hours", hours}}
	// commit ends the transaction and forgets the keys it wrote.
	commit := func() error {
		if err := f.end(true); err != nil {
			return err
		}
		for _, t := range tables {
			for _, k := range f.pending[t.name] {
				delete(t.agg, k)
			}
			f.pending[t.name] = f.pending[t.name][:0]
		}
		return nil
	}
	// yield commits and starts anew when a person's write waits.
	yield := func() error {
		if db.lane == nil || !(db.lane.priorityWaiting() || time.Since(f.began) > ingestSlice) {
			return nil
		}
		if err := commit(); err != nil {
			return err
		}
		early = true
		return f.begin()
	}
	for _, t := range tables {
		if err := upsertFlows(f, t.name, t.agg, yield); err != nil {
			return early, errors.Join(err, f.end(false))
		}
	}
	if err := commit(); err != nil {
		return early, err
	}
	return early, nil
}

// upsertFlows adds aggregates to table, rowsPerStatement rows a statement,
// calling yield after each statement. Keys written are recorded in
// f.pending until their transaction commits. (Deleting map entries during
// range is allowed; a yield deletes only keys already visited.)
func upsertFlows(f *flowTx, table string, agg map[flowKey]*flowSums, yield func() error) error {
	d := f.db.dialect
	args := make([]any, 0, rowsPerStatement*11)
	keys := make([]flowKey, 0, rowsPerStatement)
	flush := func() error {
		// begin, after a yield too, starts with no statements.
		st := f.stmts[table]
		if st == nil {
			st = &wideStmt{tx: f.tx, sqlFor: func(rows int) string { return upsertSQL(d, table, rows) }}
			f.stmts[table] = st
		}
		if err := st.exec(f.ctx, len(keys), args); err != nil {
			return err
		}
		f.pending[table] = append(f.pending[table], keys...)
		args, keys = args[:0], keys[:0]
		return yield()
	}
	for k, s := range agg {
		args = append(args, k.ts, k.exporter.String(), k.src.String(), k.dst.String(), int(k.srcPort), int(k.dstPort), int(k.proto),
			int64(s.packets), int64(s.octets), int64(s.flows), s.last)
		keys = append(keys, k)
		if len(args) == cap(args) {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if len(args) > 0 {
		return flush()
	}
	return nil
}
