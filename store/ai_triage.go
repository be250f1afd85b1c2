package store

import (
	"context"
	"fmt"

	"netmon/store/record"
)

// The reads of the AI triage (app/ai/triage, issue 32): the incidents and
// alert events created after a cursor (the last id triage handled), at or
// above a severity, in id order. Ids only grow, so "after the cursor" is
// "new since triage last looked"; the primary key serves the range.

// TriageIncidents lists the incidents whose id is above after and whose
// severity is at least minSeverity, by id, at most limit (default 100).
func (db *DB) TriageIncidents(ctx context.Context, after int64, minSeverity, limit int) ([]record.Incident, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT `+incidentColumns+` FROM incidents
		WHERE id > $1 AND severity >= $2 ORDER BY id LIMIT $3`, after, minSeverity, limit)
	if err != nil {
		return nil, fmt.Errorf("triage incidents after %d: %w", after, err)
	}
	defer rows.Close()
	out := []record.Incident{}
	for rows.Next() {
		i, err := scanIncident(rows)
		if err != nil {
			return nil, fmt.Errorf("triage incidents after %d: %w", after, err)
		}
		out = append(out, i)
	}
	return out, rows.Err()
}

// TriageAlertEvents lists the alert events whose id is above after and
// whose severity is at least minSeverity, by id, at most limit (default
// 100).
func (db *DB) TriageAlertEvents(ctx context.Context, after int64, minSeverity, limit int) ([]record.AlertEvent, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT `+alertEventColumns+` FROM alert_events
		WHERE id > $1 AND severity >= $2 ORDER BY id LIMIT $3`, after, minSeverity, limit)
	if err != nil {
		return nil, fmt.Errorf("triage alert events after %d: %w", after, err)
	}
	defer rows.Close()
	out := []record.AlertEvent{}
	for rows.Next() {
		e, err := scanAlertEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("triage alert events after %d: %w", after, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// TriageHighWater returns the highest incident and alert event ids (0
// when a table is empty): the cursor of a triage that starts for the
// first time, so that it assesses what comes next and not the history.
func (db *DB) TriageHighWater(ctx context.Context) (incident, alert int64, err error) {
	err = db.reader.QueryRowContext(ctx, `SELECT COALESCE((SELECT MAX(id) FROM incidents), 0),
		COALESCE((SELECT MAX(id) FROM alert_events), 0)`).Scan(&incident, &alert)
	if err != nil {
		return 0, 0, fmt.Errorf("triage high water: %w", err)
	}
	return incident, alert, nil
}
