package store

import (
	"context"
	"fmt"
)

// The anomaly baselines' other inputs (issue 18, beyond the spec):
// hourly aggregates of the interface series for the hour-of-week bands,
// and per-process and per-DNS-domain minute series from deep collection.
//
// Retention: every table read here is pruned at -retention-hours (168 by
// default), flow_hours included, so no table keeps 4 weeks by default.
// RateHours aggregates the raw minutes in SQL (672 rows per series for 4
// weeks instead of 40 320); the hour-of-week bands therefore judge only
// when the operator keeps 4 weeks (-retention-hours 672 or more), and the
// hour-of-day bands judge otherwise.

// RateHour is one hour of a traffic series: N minutes, and the sum and
// sum of squares of their in and out rates (bits per second).
type RateHour struct {
	TS                         int64
	N                          int
	InSum, InSq, OutSum, OutSq float64
}

// RateHours aggregates by hour the minutes in [from, to) that RateMinutes
// lists, oldest first.
func (db *DB) RateHours(ctx context.Context, agentID, from, to int64) ([]RateHour, error) {
	inner := `SELECT ts, CAST(in_bytes * 8.0 / seconds AS DOUBLE PRECISION) AS i, CAST(out_bytes * 8.0 / seconds AS DOUBLE PRECISION) AS o
		FROM traffic_minutes WHERE ts >= $1 AND ts < $2 AND seconds > 0`
	args := []any{from, to}
	if agentID != 0 {
		inner = `SELECT ts - ts % 60 AS ts, CAST(AVG(rx_bps) * 8 AS DOUBLE PRECISION) AS i, CAST(AVG(tx_bps) * 8 AS DOUBLE PRECISION) AS o
			FROM agent_samples WHERE agent_id = $3 AND ts >= $1 AND ts < $2 AND has_rate GROUP BY ts - ts % 60`
		args = append(args, agentID)
	}
	q := `SELECT m.ts - m.ts % 3600, COUNT(*), SUM(m.i), SUM(m.i * m.i), SUM(m.o), SUM(m.o * m.o)
		FROM (` + inner + `) m GROUP BY m.ts - m.ts % 3600 ORDER BY 1`
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("rate hours of %d: %w", agentID, err)
	}
	defer rows.Close()
	var out []RateHour
	for rows.Next() {
		var h RateHour
		if err := rows.Scan(&h.TS, &h.N, &h.InSum, &h.InSq, &h.OutSum, &h.OutSq); err != nil {
			return nil, fmt.Errorf("rate hours of %d: %w", agentID, err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// DeepTop returns an agent's n busiest processes (bytes in and out,
// without "(unattributed)") and n most queried DNS domains over [from,
// to), busiest first (ties by name).
func (db *DB) DeepTop(ctx context.Context, agentID, from, to int64, n int) (procs, domains []string, err error) {
	procs, err = db.names(ctx, `SELECT process FROM agent_proc_minutes WHERE agent_id = $1 AND ts >= $2 AND ts < $3 AND process <> '(unattributed)'
		GROUP BY process ORDER BY SUM(bytes_in + bytes_out) DESC, process LIMIT $4`, agentID, from, to, n)
	if err != nil {
		return nil, nil, err
	}
	domains, err = db.names(ctx, `SELECT domain FROM agent_dns_minutes WHERE agent_id = $1 AND ts >= $2 AND ts < $3
		GROUP BY domain ORDER BY SUM(queries) DESC, domain LIMIT $4`, agentID, from, to, n)
	return procs, domains, err
}

func (db *DB) names(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("deep top names: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("deep top names: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SeriesMinute is one minute of a named deep series.
type SeriesMinute struct {
	TS int64
	V  float64
}

// DeepMinutes returns the minutes in [from, to) of an agent's processes
// (bytes in and out summed over PIDs, as bits per second) and DNS domains
// (queries per minute), keyed "proc:<name>" and "dns:<domain>", only for
// the names given, oldest first. A minute without a row is no sample:
// the bands are over the minutes the process or domain was seen.
func (db *DB) DeepMinutes(ctx context.Context, agentID, from, to int64, procs, domains []string) (map[string][]SeriesMinute, error) {
	out := map[string][]SeriesMinute{}
	for _, part := range []struct {
		prefix string
		names  []string
		q      string
	}{
		{"proc:", procs, `SELECT process, ts, CAST(SUM(bytes_in + bytes_out) AS DOUBLE PRECISION) * 8 / 60 FROM agent_proc_minutes
			WHERE agent_id = $1 AND ts >= $2 AND ts < $3 GROUP BY process, ts ORDER BY ts`},
		{"dns:", domains, `SELECT domain, ts, CAST(SUM(queries) AS DOUBLE PRECISION) FROM agent_dns_minutes
			WHERE agent_id = $1 AND ts >= $2 AND ts < $3 GROUP BY domain, ts ORDER BY ts`},
	} {
		if len(part.names) == 0 {
			continue
		}
		want := make(map[string]bool, len(part.names))
		for _, n := range part.names {
			want[n] = true
		}
		if err := db.deepSeries(ctx, part.q, part.prefix, want, out, agentID, from, to); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (db *DB) deepSeries(ctx context.Context, q, prefix string, want map[string]bool, out map[string][]SeriesMinute, args ...any) error {
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("deep minutes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var m SeriesMinute
		if err := rows.Scan(&name, &m.TS, &m.V); err != nil {
			return fmt.Errorf("deep minutes: %w", err)
		}
		if want[name] {
			out[prefix+name] = append(out[prefix+name], m)
		}
	}
	return rows.Err()
}
