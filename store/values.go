package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
)

// The wide statements of bulk ingest: one INSERT or UPDATE carries many
// rows, because a statement per row spent more in database/sql and the
// driver (a context watcher goroutine per call on SQLite, a round trip
// on PostgreSQL) than in the database. Flow sums and telemetry both write
// this way, through the helpers of this file.

// rowsPerStatement is how many rows one wide statement carries: a
// statement per row made PostgreSQL's round trips the limit of the fleet
// (about 1 650 batches/s) and of the flow upserts.
const rowsPerStatement = 64

// writeRows writes rows groups of cols parameters, "(p1,p2),(p3,p4)". With
// types (one per column) each parameter is wrapped in a CAST: a VALUES
// list read as a table needs them on PostgreSQL (a bare parameter there
// is text); an INSERT's VALUES takes its types from the table (nil).
func writeRows(b *strings.Builder, d Dialect, rows, cols int, types []string) {
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteByte(',')
			}
			p := placeholder(d, r*cols+c+1)
			if types != nil {
				fmt.Fprintf(b, "CAST(%s AS %s)", p, types[c])
			} else {
				b.WriteString(p)
			}
		}
		b.WriteByte(')')
	}
}

// valuesList is "(CAST($1 AS t1), ...), (...)" for rows rows of types.
func valuesList(d Dialect, rows int, types []string) string {
	var b strings.Builder
	writeRows(&b, d, rows, len(types), types)
	return b.String()
}

// placeholder is the i-th (1-based) parameter of a wide generated
// statement: $i on PostgreSQL, a plain ? on SQLite. The SQLite driver
// looks up every numbered parameter's name by a linear search through the
// statement's name list, so 700 $N parameters cost more than the upsert
// itself (a quarter of the sFlow ingest CPU); positional ? parameters
// have no names to look up.
func placeholder(d Dialect, i int) string {
	if d == SQLite {
		return "?"
	}
	return "$" + strconv.Itoa(i)
}

// wideStmt runs a wide statement in tx: rowsPerStatement rows through a
// statement prepared once, fewer (the last of a batch) through one built
// for their number. Close it before tx ends.
type wideStmt struct {
	tx     *sql.Tx
	sqlFor func(rows int) string
	full   *sql.Stmt
}

// exec runs the statement for rows rows with their args.
func (w *wideStmt) exec(ctx context.Context, rows int, args []any) error {
	if rows != rowsPerStatement {
		_, err := w.tx.ExecContext(ctx, w.sqlFor(rows), args...)
		return err
	}
	if w.full == nil {
		st, err := w.tx.PrepareContext(ctx, w.sqlFor(rowsPerStatement))
		if err != nil {
			return err
		}
		w.full = st
	}
	_, err := w.full.ExecContext(ctx, args...)
	return err
}

// Close releases the prepared statement.
func (w *wideStmt) Close() {
	if w.full != nil {
		_ = w.full.Close()
		w.full = nil
	}
}

// execValues runs sqlFor(n) over rows, rowsPerStatement rows a statement;
// argsOf appends row i's arguments.
func execValues(ctx context.Context, tx *sql.Tx, rows int, sqlFor func(n int) string, argsOf func(i int, args []any) []any) error {
	w := &wideStmt{tx: tx, sqlFor: sqlFor}
	defer w.Close()
	var args []any
	n := 0
	for i := range rows {
		args = argsOf(i, args)
		n++
		if n == rowsPerStatement {
			if err := w.exec(ctx, n, args); err != nil {
				return err
			}
			args, n = args[:0], 0
		}
	}
	if n > 0 {
		return w.exec(ctx, n, args)
	}
	return nil
}
