package store

import (
	"context"
	"fmt"
)

// RateMinute is one minute of a traffic series in bits per second: the
// anomaly baselines' input.
type RateMinute struct {
	TS     int64
	InBps  float64
	OutBps float64
}

// RateMinutes lists the minutes in [from, to) of the hub capture's
// traffic (agentID 0: traffic_minutes, bytes over the seconds the
// capture ran) or of an agent's interface traffic (agent_samples with a
// rate, averaged per minute), oldest first.
func (db *DB) RateMinutes(ctx context.Context, agentID, from, to int64) ([]RateMinute, error) {
	q := `SELECT ts, in_bytes * 8.0 / seconds, out_bytes * 8.0 / seconds FROM traffic_minutes
		WHERE ts >= $1 AND ts < $2 AND seconds > 0 ORDER BY ts`
	args := []any{from, to}
	if agentID != 0 {
		q = `SELECT ts - ts % 60, AVG(rx_bps) * 8, AVG(tx_bps) * 8 FROM agent_samples
			WHERE agent_id = $3 AND ts >= $1 AND ts < $2 AND has_rate GROUP BY ts - ts % 60 ORDER BY 1`
		args = append(args, agentID)
	}
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("rate minutes of %d: %w", agentID, err)
	}
	defer rows.Close()
	var out []RateMinute
	for rows.Next() {
		var m RateMinute
		if err := rows.Scan(&m.TS, &m.InBps, &m.OutBps); err != nil {
			return nil, fmt.Errorf("rate minutes of %d: %w", agentID, err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}
