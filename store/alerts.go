package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"netmon/store/record"
)

// Alert events, notes and silences (spec 2.6, 3). The engine (alerting)
// decides what fires; these methods keep it. Changes an operator makes
// (ack, resolve, note, silences) have *Tx variants so they commit with
// their audit record.

const alertEventColumns = `id, ts, kind, key, message, severity, state, site, count, group_id, ext_ref, agent_id, last_ts, resolved_ts, process`

func scanAlertEvent(r rowScanner) (record.AlertEvent, error) {
	var e record.AlertEvent
	err := r.Scan(&e.ID, &e.TS, &e.Kind, &e.Key, &e.Message, &e.Severity, &e.State, &e.Site, &e.Count, &e.GroupID, &e.ExtRef, &e.AgentID, &e.LastTS, &e.ResolvedTS, &e.Process)
	return e, err
}

// InsertAlertEvent stores a new event and returns it with its id. It is
// the engine's evaluation writing, as are RepeatAlertEvent and
// ResolveAlertEvent: they take the writer lane's rules level, after
// people's writes and before ingest (lane.go).
func (db *DB) InsertAlertEvent(ctx context.Context, e record.AlertEvent) (record.AlertEvent, error) {
	if e.LastTS == 0 {
		e.LastTS = e.TS
	}
	if e.Count == 0 {
		e.Count = 1
	}
	release, err := db.takeAt(ctx, levelRules)
	if err != nil {
		return record.AlertEvent{}, fmt.Errorf("insert alert event: %w", err)
	}
	defer release()
	err = db.withTx(ctx, func(tx *sql.Tx) error {
		t := &Tx{tx: tx, dialect: db.dialect}
		const q = `INSERT INTO alert_events (ts, kind, key, message, severity, state, site, count, group_id, ext_ref, agent_id, last_ts, process)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`
		return t.tx.QueryRowContext(ctx, q, e.TS, e.Kind, cleanText(e.Key), cleanText(e.Message), e.Severity, e.State, e.Site,
			e.Count, e.GroupID, e.ExtRef, e.AgentID, e.LastTS, cleanText(e.Process)).Scan(&e.ID)
	})
	if err != nil {
		return record.AlertEvent{}, fmt.Errorf("insert alert event: %w", err)
	}
	return e, nil
}

// RepeatAlertEvent records that an open event's condition fired again:
// count becomes count and last_ts ts. No row is added (spec 3).
func (db *DB) RepeatAlertEvent(ctx context.Context, id, count, ts int64) error {
	if _, err := db.execRules(ctx, `UPDATE alert_events SET count = $1, last_ts = $2 WHERE id = $3`, count, ts, id); err != nil {
		return fmt.Errorf("repeat alert event %d: %w", id, err)
	}
	return nil
}

// ResolveAlertEvent resolves an open event by itself (auto-resolve); an
// event already resolved stays as it was.
func (db *DB) ResolveAlertEvent(ctx context.Context, id, ts int64) error {
	if _, err := db.execRules(ctx, `UPDATE alert_events SET state = 'resolved', resolved_ts = $1 WHERE id = $2 AND state <> 'resolved'`, ts, id); err != nil {
		return fmt.Errorf("resolve alert event %d: %w", id, err)
	}
	return nil
}

// AlertEvent returns one event, or an error wrapping ErrNotFound.
func (db *DB) AlertEvent(ctx context.Context, id int64) (record.AlertEvent, error) {
	e, err := scanAlertEvent(db.reader.QueryRowContext(ctx, `SELECT `+alertEventColumns+` FROM alert_events WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return e, fmt.Errorf("alert event %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return e, fmt.Errorf("alert event %d: %w", id, err)
	}
	return e, nil
}

// SetAlertState moves an event to state (ack or resolved) inside t, so it
// commits with its audit record. It returns an error wrapping ErrNotFound
// when there is no such event.
func (t *Tx) SetAlertState(ctx context.Context, id int64, state string, ts int64) error {
	q := `UPDATE alert_events SET state = $1 WHERE id = $2`
	args := []any{state, id}
	if state == record.AlertResolved {
		q = `UPDATE alert_events SET state = $1, resolved_ts = $3 WHERE id = $2`
		args = append(args, ts)
	}
	res, err := t.tx.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("set alert %d state: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set alert %d state: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("set alert %d state: %w", id, ErrNotFound)
	}
	return nil
}

// AddAlertNote adds a note to an event inside t and returns its id.
func (t *Tx) AddAlertNote(ctx context.Context, n record.AlertNote) (int64, error) {
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO alert_notes (event_id, ts, author, text) VALUES ($1, $2, $3, $4) RETURNING id`,
		n.EventID, n.TS, n.Author, cleanText(n.Text)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("add alert note: %w", err)
	}
	return id, nil
}

// AlertNotes returns an event's notes, oldest first.
func (db *DB) AlertNotes(ctx context.Context, eventID int64) ([]record.AlertNote, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, event_id, ts, author, text FROM alert_notes WHERE event_id = $1 ORDER BY id`, eventID)
	if err != nil {
		return nil, fmt.Errorf("alert notes: %w", err)
	}
	defer rows.Close()
	out := []record.AlertNote{}
	for rows.Next() {
		var n record.AlertNote
		if err := rows.Scan(&n.ID, &n.EventID, &n.TS, &n.Author, &n.Text); err != nil {
			return nil, fmt.Errorf("alert notes: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// AlertFilter selects events for ListAlertEvents; zero fields do not
// filter.
type AlertFilter struct {
	Kind, State, Site string
	// SiteScope, when set, limits to that site (a site-bound caller).
	SiteScope   string
	MinSeverity int
	AgentID     int64
	// Process selects the events about one process (with AgentID).
	Process  string
	From, To int64
	// Before is the cursor: events with a smaller (ts, id) than it.
	BeforeTS, BeforeID int64
	// Open selects firing and acknowledged events only.
	Open  bool
	Limit int
}

// ListAlertEvents returns the events f selects, newest first (ts, then id
// descending), so a (ts, id) cursor pages without skipping or repeating.
func (db *DB) ListAlertEvents(ctx context.Context, f AlertFilter) ([]record.AlertEvent, error) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Kind != "" {
		add("kind = $%d", f.Kind)
	}
	if f.State != "" {
		add("state = $%d", f.State)
	}
	if f.Open {
		where = append(where, "state <> 'resolved'")
	}
	if f.Site != "" {
		add("site = $%d", f.Site)
	}
	if f.SiteScope != "" {
		add("site = $%d", f.SiteScope)
	}
	if f.MinSeverity > 0 {
		add("severity >= $%d", f.MinSeverity)
	}
	if f.AgentID > 0 {
		add("agent_id = $%d", f.AgentID)
	}
	if f.Process != "" {
		add("process = $%d", f.Process)
	}
	if f.From > 0 {
		add("ts >= $%d", f.From)
	}
	if f.To > 0 {
		add("ts <= $%d", f.To)
	}
	if f.BeforeTS > 0 {
		args = append(args, f.BeforeTS, f.BeforeID)
		where = append(where, fmt.Sprintf("(ts < $%d OR (ts = $%d AND id < $%d))", len(args)-1, len(args)-1, len(args)))
	}
	q := `SELECT ` + alertEventColumns + ` FROM alert_events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY ts DESC, id DESC`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list alert events: %w", err)
	}
	defer rows.Close()
	out := []record.AlertEvent{}
	for rows.Next() {
		e, err := scanAlertEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("list alert events: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// InsertAlertSilence stores a silence inside t and returns its id.
func (t *Tx) InsertAlertSilence(ctx context.Context, s record.AlertSilence) (int64, error) {
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO alert_silences (kind, site, key, start_ts, end_ts, comment, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
		s.Kind, s.Site, cleanText(s.Key), s.Start, s.End, cleanText(s.Comment), s.CreatedBy, s.CreatedAt).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert alert silence: %w", err)
	}
	return id, nil
}

// DeleteAlertSilence removes a silence inside t; an error wrapping
// ErrNotFound when there is none.
func (t *Tx) DeleteAlertSilence(ctx context.Context, id int64) error {
	res, err := t.tx.ExecContext(ctx, `DELETE FROM alert_silences WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete alert silence %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete alert silence %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("delete alert silence %d: %w", id, ErrNotFound)
	}
	return nil
}

// AlertSilences returns the silences that have not ended at now (all of
// them when now is 0), newest first.
func (db *DB) AlertSilences(ctx context.Context, now int64) ([]record.AlertSilence, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, kind, site, key, start_ts, end_ts, comment, created_by, created_at
		FROM alert_silences WHERE end_ts > $1 ORDER BY id DESC`, now)
	if err != nil {
		return nil, fmt.Errorf("alert silences: %w", err)
	}
	defer rows.Close()
	out := []record.AlertSilence{}
	for rows.Next() {
		var s record.AlertSilence
		if err := rows.Scan(&s.ID, &s.Kind, &s.Site, &s.Key, &s.Start, &s.End, &s.Comment, &s.CreatedBy, &s.CreatedAt); err != nil {
			return nil, fmt.Errorf("alert silences: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// OpenAlertEvents returns the firing and acknowledged events, oldest
// first: the alert engine's state after a restart.
func (db *DB) OpenAlertEvents(ctx context.Context) ([]record.AlertEvent, error) {
	evs, err := db.ListAlertEvents(ctx, AlertFilter{Open: true})
	if err != nil {
		return nil, err
	}
	slices.Reverse(evs)
	return evs, nil
}

// AgentSeq is the seq of an agent's last stored batch.
type AgentSeq struct {
	ID      int64
	LastSeq int64
}

// AgentSeqs lists the agents seen at or after since (Unix seconds) with
// the seq of their last batch: the alert engine compares the seqs with
// the ones it evaluated and reads the inventories of the changed agents
// only. Seqs, not times: last_seen is the agent's clock, which neither
// orders one agent's batches reliably nor compares across agents.
func (db *DB) AgentSeqs(ctx context.Context, since int64) ([]AgentSeq, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, last_seq FROM agents WHERE last_seen >= $1 ORDER BY id`, since)
	if err != nil {
		return nil, fmt.Errorf("agent seqs: %w", err)
	}
	defer rows.Close()
	out := []AgentSeq{}
	for rows.Next() {
		var a AgentSeq
		if err := rows.Scan(&a.ID, &a.LastSeq); err != nil {
			return nil, fmt.Errorf("agent seqs: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// AgentInventory is an agent's connection inventory as its last batch
// (seq LastSeq) left it (JSON, as the intake encoded it).
type AgentInventory struct {
	ID          int64
	Site        string
	LastSeq     int64
	Connections string
}

// agentInventoryChunk bounds the ids of one IN list (parameters per
// statement).
const agentInventoryChunk = 500

// AgentInventories returns the inventories of the agents ids, by id. The
// seq is read with the connections in one row, so it names the batch
// those connections came from even when a newer batch lands meanwhile.
func (db *DB) AgentInventories(ctx context.Context, ids []int64) ([]AgentInventory, error) {
	out := []AgentInventory{}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), agentInventoryChunk)]
		ids = ids[len(chunk):]
		var q strings.Builder
		q.WriteString(`SELECT id, site, last_seq, connections FROM agents WHERE id IN (`)
		args := make([]any, len(chunk))
		for i, id := range chunk {
			if i > 0 {
				q.WriteByte(',')
			}
			fmt.Fprintf(&q, "$%d", i+1)
			args[i] = id
		}
		q.WriteString(`) ORDER BY id`)
		if err := func() error {
			rows, err := db.reader.QueryContext(ctx, q.String(), args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var a AgentInventory
				if err := rows.Scan(&a.ID, &a.Site, &a.LastSeq, &a.Connections); err != nil {
					return err
				}
				out = append(out, a)
			}
			return rows.Err()
		}(); err != nil {
			return nil, fmt.Errorf("agent inventories: %w", err)
		}
	}
	return out, nil
}
