package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"netmon/store/record"
)

// Incidents (spec 3, 4.10, 6.4): alerting/incident decides which events
// belong together; these methods keep the incidents and their members.
// An operator's state change has a *Tx variant so it commits with its
// audit record.

const incidentColumns = `id, correlation_key, rule, agent_id, site, state, severity, risk, title, opened_ts, updated_ts, closed_ts`

func scanIncident(r rowScanner) (record.Incident, error) {
	var i record.Incident
	err := r.Scan(&i.ID, &i.Key, &i.Rule, &i.AgentID, &i.Site, &i.State, &i.Severity, &i.Risk, &i.Title, &i.OpenedTS, &i.UpdatedTS, &i.ClosedTS)
	return i, err
}

// RecentAlertEvents lists the events that fired or repeated at or after
// since (the correlation window), oldest first.
func (db *DB) RecentAlertEvents(ctx context.Context, since int64) ([]record.AlertEvent, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT `+alertEventColumns+` FROM alert_events WHERE last_ts >= $1 ORDER BY ts, id`, since)
	if err != nil {
		return nil, fmt.Errorf("recent alert events: %w", err)
	}
	defer rows.Close()
	var out []record.AlertEvent
	for rows.Next() {
		e, err := scanAlertEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("recent alert events: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// UpsertIncident records a correlation: when an incident of inc.Key is
// open, its severity and risk rise to inc's when higher (never fall),
// updated_ts moves and the new members are added; otherwise inc is
// stored as a new open incident. It returns the incident as stored and
// whether it was created.
func (db *DB) UpsertIncident(ctx context.Context, inc record.Incident, members []int64) (record.Incident, bool, error) {
	created := false
	err := db.InTx(ctx, func(t *Tx) error {
		cur, err := scanIncident(t.tx.QueryRowContext(ctx, `SELECT `+incidentColumns+` FROM incidents
			WHERE correlation_key = $1 AND state IN ('open', 'ack', 'investigating')`, inc.Key))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			created = true
			inc.State = record.IncidentOpen
			err = t.tx.QueryRowContext(ctx, `INSERT INTO incidents (correlation_key, rule, agent_id, site, state, severity, risk, title, opened_ts, updated_ts)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
				inc.Key, inc.Rule, inc.AgentID, inc.Site, inc.State, inc.Severity, inc.Risk, cleanText(inc.Title), inc.OpenedTS, inc.UpdatedTS).Scan(&inc.ID)
			if err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			cur.Severity, cur.Risk = max(cur.Severity, inc.Severity), max(cur.Risk, inc.Risk)
			cur.UpdatedTS = inc.UpdatedTS
			if _, err := t.tx.ExecContext(ctx, `UPDATE incidents SET severity = $1, risk = $2, updated_ts = $3 WHERE id = $4`,
				cur.Severity, cur.Risk, cur.UpdatedTS, cur.ID); err != nil {
				return err
			}
			inc = cur
		}
		for _, id := range members {
			if _, err := t.tx.ExecContext(ctx, `INSERT INTO incident_events (incident_id, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, inc.ID, id); err != nil {
				return err
			}
			// The first incident an event joins is its alert group
			// (group_id, spec 3): the unit of one ticket.
			if _, err := t.tx.ExecContext(ctx, `UPDATE alert_events SET group_id = $1 WHERE id = $2 AND group_id = 0`, inc.ID, id); err != nil {
				return err
			}
		}
		// Members joining a group whose ticket is open share it.
		_, err = t.tx.ExecContext(ctx, `UPDATE alert_events SET ext_ref = COALESCE((SELECT g.ext_ref FROM alert_events g
			WHERE g.group_id = $1 AND g.ext_ref <> '' ORDER BY g.ts, g.id LIMIT 1), '') WHERE group_id = $1 AND ext_ref = ''`, inc.ID)
		return err
	})
	if err != nil {
		return inc, false, fmt.Errorf("upsert incident %s: %w", inc.Key, err)
	}
	return inc, created, nil
}

// IncidentFilter selects incidents; zero fields match all.
type IncidentFilter struct {
	State   string
	AgentID int64
	// SiteScope, when set, limits to that site (a site-bound caller).
	SiteScope string
	Limit     int
}

// ListIncidents lists incidents newest first.
func (db *DB) ListIncidents(ctx context.Context, f IncidentFilter) ([]record.Incident, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.State != "" {
		add("state = $%d", f.State)
	}
	if f.AgentID > 0 {
		add("agent_id = $%d", f.AgentID)
	}
	if f.SiteScope != "" {
		add("site = $%d", f.SiteScope)
	}
	q := `SELECT ` + incidentColumns + ` FROM incidents`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	args = append(args, f.Limit)
	q += fmt.Sprintf(` ORDER BY opened_ts DESC, id DESC LIMIT $%d`, len(args))
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list incidents: %w", err)
	}
	defer rows.Close()
	out := []record.Incident{}
	for rows.Next() {
		i, err := scanIncident(rows)
		if err != nil {
			return nil, fmt.Errorf("list incidents: %w", err)
		}
		out = append(out, i)
	}
	return out, rows.Err()
}

// Incident returns one incident (ErrNotFound when none).
func (db *DB) Incident(ctx context.Context, id int64) (record.Incident, error) {
	i, err := scanIncident(db.reader.QueryRowContext(ctx, `SELECT `+incidentColumns+` FROM incidents WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return i, fmt.Errorf("incident %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return i, fmt.Errorf("incident %d: %w", id, err)
	}
	return i, nil
}

// IncidentEvents lists an incident's member events, oldest first.
func (db *DB) IncidentEvents(ctx context.Context, id int64) ([]record.AlertEvent, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT `+prefixed("e.", alertEventColumns)+` FROM alert_events e
		JOIN incident_events m ON m.event_id = e.id WHERE m.incident_id = $1 ORDER BY e.ts, e.id`, id)
	if err != nil {
		return nil, fmt.Errorf("incident %d events: %w", id, err)
	}
	defer rows.Close()
	out := []record.AlertEvent{}
	for rows.Next() {
		e, err := scanAlertEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("incident %d events: %w", id, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

// SetIncidentState moves an incident to state inside t (with its audit
// record); closedTS is set when it resolves or closes. ErrNotFound when
// there is no such incident.
func (t *Tx) SetIncidentState(ctx context.Context, id int64, state string, ts int64) error {
	closed := int64(0)
	if !record.IncidentIsOpen(state) {
		closed = ts
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE incidents SET state = $1, updated_ts = $2,
		closed_ts = CASE WHEN $3 > 0 AND closed_ts = 0 THEN $3 ELSE closed_ts END WHERE id = $4`, state, ts, closed, id)
	if err != nil {
		return fmt.Errorf("set incident %d state: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set incident %d state: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("incident %d: %w", id, ErrNotFound)
	}
	return nil
}
