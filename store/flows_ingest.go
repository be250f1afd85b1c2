package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"netmon/store/flowagg"
	"netmon/store/record"
)

// WriteFlows sums records into their exporter minutes with the default
// budget and writes them at once (see WriteFlowMinutes): the direct path
// for tests and imports; the ingest queue aggregates in memory first. It
// returns the number of minute rows written.
func (db *DB) WriteFlows(ctx context.Context, fs []record.Flow) (int, error) {
	ms := flowagg.Sums(flowagg.DefaultConfig(), fs)
	if _, err := db.WriteFlowMinutes(ctx, ms); err != nil {
		return 0, err
	}
	n := 0
	for _, m := range ms {
		n += len(m.Rows)
	}
	return n, nil
}

// flowCols are the columns of flow_minutes and flow_hours, in insert order.
const flowCols = `ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen`

// insertFlowSQL is the plain insert of rows rows into table (flow_minutes
// or flow_hours, a constant of this file: never user input). No upsert:
// both tables are append-only and every query sums.
func insertFlowSQL(d Dialect, table string, rows int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO ` + table + ` (` + flowCols + `) VALUES `)
	writeRows(&b, d, rows, 12, nil)
	return b.String()
}

// hourLockClass is the first key of the PostgreSQL advisory locks that
// order a minute's write against the build of its hour (issue 16).
const hourLockClass = 16

// flowTxRows is about how many rows one flow transaction writes before
// the next minute starts a new one (a few milliseconds of work): on SQLite
// a person's write waits at most that long behind it (see lane.go).
const flowTxRows = 1024

// WriteFlowMinutes appends closed exporter minutes. Each minute is written
// whole in one transaction (minutes are grouped up to about flowTxRows
// rows a transaction, the lane handed over between them); it returns how
// many of ms are committed, also on error, so that a retry writes only the
// rest. A minute whose hour was already built into flow_hours (a late
// flow) is appended there too, in the same transaction; otherwise its
// hour is marked to be built (BuildFlowHours).
func (db *DB) WriteFlowMinutes(ctx context.Context, ms []flowagg.Minute) (int, error) {
	done := 0
	for done < len(ms) {
		end, rows := done, 0
		for end < len(ms) && (end == done || rows+len(ms[end].Rows) <= flowTxRows) {
			rows += len(ms[end].Rows)
			end++
		}
		if err := db.writeMinutes(ctx, ms[done:end]); err != nil {
			return done, fmt.Errorf("write flows: %w", err)
		}
		done = end
	}
	return done, nil
}

func (db *DB) writeMinutes(ctx context.Context, ms []flowagg.Minute) error {
	release, err := db.take(ctx, false)
	if err != nil {
		return err
	}
	defer release()
	if db.dialect == Postgres {
		// Each day's partition before the write (a no-op once known): the
		// rows land in their day, not in the DEFAULT partition.
		for i := range ms {
			db.ensureFlowDayForWrite(ctx, ms[i].TS)
		}
	}
	var learned []string
	_, gen := db.days.has("")
	err = db.withTx(ctx, func(tx *sql.Tx) error {
		w := &flowWriter{ctx: ctx, tx: tx, d: db.dialect, stmts: map[string]*wideStmt{}}
		defer w.close()
		built := map[int64]bool{}
		days := map[int64]bool{}
		for i := range ms {
			m := &ms[i]
			hour := m.TS - m.TS%3600
			b, seen := built[hour]
			if !seen {
				var err error
				if b, err = w.hourState(hour); err != nil {
					return err
				}
				built[hour] = b
			}
			minutes, hours := "flow_minutes", "flow_hours"
			if db.dialect == SQLite && !days[m.TS/86400] {
				// On SQLite the rows go to their day's table (flow_days.go).
				days[m.TS/86400] = true
				for _, parent := range flowDayTables {
					names, err := ensureSQLiteDays(ctx, tx, &db.days, parent, []int64{m.TS})
					if err != nil {
						return err
					}
					learned = append(learned, names...)
				}
			}
			if db.dialect == SQLite {
				minutes, hours = FlowDayTable(minutes, m.TS), FlowDayTable(hours, hour)
			}
			if err := w.rows(minutes, m.TS, m); err != nil {
				return err
			}
			if b {
				if err := w.rows(hours, hour, m); err != nil {
					return err
				}
			}
		}
		return w.flushAll()
	})
	if err != nil {
		// A day table dropped under a cached name: look them up again.
		db.days.forget()
		return err
	}
	db.days.learn(learned, gen)
	return nil
}

// flowWriter batches rows into chunked INSERTs within one transaction.
type flowWriter struct {
	ctx   context.Context
	tx    *sql.Tx
	d     Dialect
	stmts map[string]*wideStmt // the insert of each table
	args  map[string][]any
}

func (w *flowWriter) close() {
	for _, st := range w.stmts {
		st.Close()
	}
}

// hourState marks hour as having minutes and reports whether it is built
// already. On PostgreSQL it first takes the hour's shared advisory lock,
// which BuildFlowHours takes exclusively: a minute commits wholly before
// or wholly after its hour's build, never beside it.
func (w *flowWriter) hourState(hour int64) (bool, error) {
	if w.d == Postgres {
		if _, err := w.tx.ExecContext(w.ctx, `SELECT pg_advisory_xact_lock_shared($1, $2)`, hourLockClass, int32(hour/3600)); err != nil {
			return false, err
		}
	}
	if _, err := w.tx.ExecContext(w.ctx, `INSERT INTO flow_hour_state (ts, built) VALUES ($1, 0) ON CONFLICT (ts) DO NOTHING`, hour); err != nil {
		return false, err
	}
	var built int
	if err := w.tx.QueryRowContext(w.ctx, `SELECT built FROM flow_hour_state WHERE ts = $1`, hour).Scan(&built); err != nil {
		return false, err
	}
	return built != 0, nil
}

func (w *flowWriter) rows(table string, ts int64, m *flowagg.Minute) error {
	if w.args == nil {
		w.args = map[string][]any{}
	}
	exporter := "" // an overflow minute's: no exporter (flowagg.Aggregator.bucket)
	if m.Exporter.IsValid() {
		exporter = m.Exporter.String()
	}
	for i := range m.Rows {
		r := &m.Rows[i]
		src, dst := "", ""
		if !r.Other {
			src, dst = r.Src.String(), r.Dst.String()
		}
		a := append(w.args[table], ts, exporter, src, dst, int(r.SrcPort), int(r.DstPort), int(r.Proto),
			int64(r.Packets), int64(r.Octets), int64(r.Flows), r.First, r.Last)
		w.args[table] = a
		if len(a) == rowsPerStatement*12 {
			if err := w.flush(table); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *flowWriter) flush(table string) error {
	args := w.args[table]
	if len(args) == 0 {
		return nil
	}
	st := w.stmts[table]
	if st == nil {
		st = &wideStmt{tx: w.tx, sqlFor: func(rows int) string { return insertFlowSQL(w.d, table, rows) }}
		w.stmts[table] = st
	}
	err := st.exec(w.ctx, len(args)/12, args)
	w.args[table] = args[:0]
	return err
}

func (w *flowWriter) flushAll() error {
	for t := range w.args {
		if err := w.flush(t); err != nil {
			return err
		}
	}
	return nil
}

// buildHourSQL rolls one hour of flow_minutes ($1, its start) into
// flow_hours: per exporter the $2 5-tuples with the most octets in
// detail, the rest (and the minutes' own remainders) summed into one other
// row per exporter and protocol, so the hour's totals equal its minutes'.
func buildHourSQL(target string) string {
	return `WITH g AS (
	SELECT exporter, src, dst, src_port, dst_port, proto,
		SUM(packets) AS packets, SUM(octets) AS octets, SUM(flows) AS flows, MIN(first_seen) AS first_seen, MAX(last_seen) AS last_seen,
		ROW_NUMBER() OVER (PARTITION BY exporter ORDER BY CASE WHEN src = '' THEN 1 ELSE 0 END, SUM(octets) DESC, src, dst, src_port, dst_port, proto) AS rn
	FROM flow_minutes WHERE ts >= CAST($1 AS BIGINT) AND ts < CAST($1 AS BIGINT) + 3600
	GROUP BY exporter, src, dst, src_port, dst_port, proto)
INSERT INTO ` + target + ` (` + flowCols + `)
SELECT CAST($1 AS BIGINT), exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen FROM g WHERE rn <= $2 AND src <> ''
UNION ALL
SELECT CAST($1 AS BIGINT), exporter, '', '', 0, 0, proto, SUM(packets), SUM(octets), SUM(flows), MIN(first_seen), MAX(last_seen) FROM g WHERE rn > $2 OR src = '' GROUP BY exporter, proto`
}

// BuildFlowHours rolls every hour that has minutes, is not built yet and
// ended at or before before into flow_hours (hourRows detail rows per
// exporter, see buildHourSQL), each hour in its own transaction with its
// mark, and returns how many it built. Minutes that arrive for a built
// hour are appended to it by WriteFlowMinutes.
func (db *DB) BuildFlowHours(ctx context.Context, before int64, hourRows int) (int, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT ts FROM flow_hour_state WHERE built = 0 AND ts + 3600 <= $1 ORDER BY ts`, before)
	if err != nil {
		return 0, fmt.Errorf("build flow hours: %w", err)
	}
	var hours []int64
	for rows.Next() {
		var h int64
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return 0, fmt.Errorf("build flow hours: %w", err)
		}
		hours = append(hours, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("build flow hours: %w", err)
	}
	n := 0
	for _, h := range hours {
		if err := db.buildHour(ctx, h, hourRows); err != nil {
			return n, fmt.Errorf("build flow hour %d: %w", h, err)
		}
		n++
	}
	return n, nil
}

func (db *DB) buildHour(ctx context.Context, hour int64, hourRows int) error {
	release, err := db.take(ctx, false)
	if err != nil {
		return err
	}
	defer release()
	if db.dialect == Postgres {
		db.ensureFlowDayForWrite(ctx, hour)
	}
	var learned []string
	_, gen := db.days.has("")
	err = db.withTx(ctx, func(tx *sql.Tx) error {
		if db.dialect == Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, hourLockClass, int32(hour/3600)); err != nil {
				return err
			}
		}
		var built int
		if err := tx.QueryRowContext(ctx, `SELECT built FROM flow_hour_state WHERE ts = $1`, hour).Scan(&built); err != nil {
			return err
		}
		if built != 0 {
			return nil // another hub built it
		}
		target := "flow_hours"
		if db.dialect == SQLite {
			// Into the hour's day table (flow_days.go), not the view.
			names, err := ensureSQLiteDays(ctx, tx, &db.days, target, []int64{hour})
			if err != nil {
				return err
			}
			learned = names
			target = FlowDayTable(target, hour)
		}
		if _, err := tx.ExecContext(ctx, buildHourSQL(target), hour, hourRows); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE flow_hour_state SET built = 1 WHERE ts = $1`, hour)
		return err
	})
	if err != nil {
		db.days.forget()
		return err
	}
	db.days.learn(learned, gen)
	return nil
}
