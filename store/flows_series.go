package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"netmon/store/flowagg"
)

// SeriesDims are the dimensions of FlowSeries and their SQL: port is the
// lower of the two ports, the service side as a rule (a reply's source
// port 443 and a request's destination port 443 are the same service).
var SeriesDims = map[string]string{
	"exporter": "exporter",
	"src":      "src",
	"dst":      "dst",
	"port":     "CASE WHEN src_port < dst_port THEN src_port ELSE dst_port END",
	"proto":    "proto",
}

// FlowSeries is the top N values of a dimension per minute.
type FlowSeries struct {
	// Times are the minutes' starts, Unix seconds, every minute of the
	// window (empty minutes too).
	Times []int64
	// Keys are the top values, octets descending; Octets[i][j] is key i's
	// octets in minute Times[j].
	Keys   []string
	Octets [][]int64
	// Other is the rest per minute: the values below the top and the
	// flows the store kept no detail of (for a dimension other than
	// exporter, when no address, port or protocol filter is set).
	Other []int64
}

// FlowSeries sums the flows matching f from the minute of from to the
// minute of to (both included) per minute for the top values of
// dimension dim (a key of SeriesDims) by octets over the window.
// The queries share one snapshot, so that a minute written meanwhile
// cannot make Other negative. open are the minutes not written yet (the
// ingest queue's, as TopFlows takes them): their rows count as stored ones.
func (db *DB) FlowSeries(ctx context.Context, from, to int64, dim string, top int, site string, f FlowFilter, open []flowagg.Minute) (_ *FlowSeries, err error) {
	expr, ok := SeriesDims[dim]
	if !ok {
		return nil, fmt.Errorf("flow series: unknown dimension %q", dim)
	}
	from -= from % 60
	to -= to % 60
	args := []any{from, to}
	where := ` AND ts >= $1 AND ts <= $2`
	if site != "" {
		args = append(args, site)
		where += siteClause(site, len(args))
	}
	fc, fargs := f.clause(len(args) + 1)
	where += fc
	args = append(args, fargs...)
	detail := where
	if dim != "exporter" {
		// The other rows carry no address, port or protocol.
		detail += ` AND src <> ''`
	}
	// The open minutes join each query as rows of the same shape, under
	// the same conditions (withOpen moves them inside its union).
	totSrc, where, totArgs, err := db.withOpen("flow_minutes", where, args, open)
	if err != nil {
		return nil, fmt.Errorf("flow series: %w", err)
	}
	detSrc, detail, args, err := db.withOpen("flow_minutes", detail, args, open)
	if err != nil {
		return nil, fmt.Errorf("flow series: %w", err)
	}
	opts := &sql.TxOptions{ReadOnly: true}
	if db.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	} else {
		opts = nil
	}
	tx, err := db.reader.BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("flow series: %w", err)
	}
	defer func() { err = errors.Join(err, tx.Rollback()) }()
	out := &FlowSeries{Keys: []string{}, Octets: [][]int64{}}
	for t := from; t <= to; t += 60 {
		out.Times = append(out.Times, t)
	}
	idx := func(ts int64) int { return int((ts - from) / 60) }
	out.Other = make([]int64, len(out.Times))

	// Every minute's total; the top keys' minutes come off it below.
	rows, err := tx.QueryContext(ctx, `SELECT ts, SUM(octets) FROM `+totSrc+` WHERE 1 = 1`+where+` GROUP BY ts`, totArgs...)
	if err != nil {
		return nil, fmt.Errorf("flow series: %w", err)
	}
	for rows.Next() {
		var ts, oct int64
		if err := rows.Scan(&ts, &oct); err != nil {
			rows.Close()
			return nil, fmt.Errorf("flow series: %w", err)
		}
		out.Other[idx(ts)] += oct
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("flow series: %w", err)
	}

	topQ := fmt.Sprintf(`SELECT %s FROM %s WHERE 1 = 1%s GROUP BY %s ORDER BY SUM(octets) DESC, %s LIMIT $%d`, expr, detSrc, detail, expr, expr, len(args)+1)
	rows, err = tx.QueryContext(ctx, topQ, append(args[:len(args):len(args)], top)...)
	if err != nil {
		return nil, fmt.Errorf("flow series: %w", err)
	}
	keyIdx := map[string]int{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, fmt.Errorf("flow series: %w", err)
		}
		keyIdx[k] = len(out.Keys)
		out.Keys = append(out.Keys, k)
		out.Octets = append(out.Octets, make([]int64, len(out.Times)))
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out.Keys) == 0 {
		if err != nil {
			return nil, fmt.Errorf("flow series: %w", err)
		}
		return out, nil
	}
	// The top keys' minutes, the top query as a subquery so that the keys
	// keep their column's type on both engines.
	q := fmt.Sprintf(`SELECT ts, %s, SUM(octets) FROM %s WHERE 1 = 1%s AND %s IN (SELECT k FROM (SELECT %s AS k FROM %s WHERE 1 = 1%s GROUP BY %s ORDER BY SUM(octets) DESC, %s LIMIT $%d) AS t)
		GROUP BY ts, %s`, expr, detSrc, detail, expr, expr, detSrc, detail, expr, expr, len(args)+1, expr)
	rows, err = tx.QueryContext(ctx, q, append(args[:len(args):len(args)], top)...)
	if err != nil {
		return nil, fmt.Errorf("flow series: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ts, oct int64
		var k string
		if err := rows.Scan(&ts, &k, &oct); err != nil {
			return nil, fmt.Errorf("flow series: %w", err)
		}
		i, ok := keyIdx[k]
		if !ok {
			continue // a tie at the limit read differently: counted in other
		}
		out.Octets[i][idx(ts)] += oct
		out.Other[idx(ts)] -= oct
	}
	return out, rows.Err()
}
