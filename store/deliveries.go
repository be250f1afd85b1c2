package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"netmon/store/record"
)

// Alert deliveries (issue 19): the notifier's persisted retry queue and
// delivery log. Inserts and outcomes are batched, one transaction each,
// so a burst of events costs a few commits, not one per delivery.

const deliveryColumns = `id, event_id, channel, route, status, attempts, created_ts, next_ts, updated_ts, error, event`

func scanDelivery(r rowScanner) (record.AlertDelivery, error) {
	var d record.AlertDelivery
	var ev string
	if err := r.Scan(&d.ID, &d.EventID, &d.Channel, &d.Route, &d.Status, &d.Attempts, &d.CreatedTS, &d.NextTS, &d.UpdatedTS, &d.Error, &ev); err != nil {
		return d, err
	}
	if err := json.Unmarshal([]byte(ev), &d.Event); err != nil {
		return d, fmt.Errorf("delivery %d event: %w", d.ID, err)
	}
	return d, nil
}

// InsertDeliveries stores pending deliveries in one transaction with
// one prepared statement (a burst of events is a few commits). The ids
// are not read back: the channels' workers read the rows.
func (db *DB) InsertDeliveries(ctx context.Context, ds []record.AlertDelivery) error {
	err := db.InTx(ctx, func(t *Tx) error {
		st, err := t.tx.PrepareContext(ctx, `INSERT INTO alert_deliveries (event_id, channel, route, status, attempts, created_ts, next_ts, updated_ts, error, event)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`)
		if err != nil {
			return err
		}
		defer st.Close()
		// Events repeat across channels: marshal each once.
		var lastID int64 = -1
		var ev []byte
		for _, d := range ds {
			if d.EventID != lastID || ev == nil {
				if ev, err = json.Marshal(d.Event); err != nil {
					return err
				}
				lastID = d.EventID
			}
			status := d.Status
			if status == "" {
				status = record.DeliveryPending
			}
			if _, err := st.ExecContext(ctx, d.EventID, d.Channel, d.Route, status, d.Attempts, d.CreatedTS, d.NextTS,
				d.UpdatedTS, cleanText(d.Error), string(ev)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("insert deliveries: %w", err)
	}
	return nil
}

// DueDeliveries returns up to limit pending deliveries of channel whose
// next attempt is at or before now, oldest first.
func (db *DB) DueDeliveries(ctx context.Context, channel string, now int64, limit int) ([]record.AlertDelivery, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM alert_deliveries
		WHERE status = 'pending' AND channel = $1 AND next_ts <= $2 ORDER BY next_ts, id LIMIT $3`, channel, now, limit)
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	return collectDeliveries(rows)
}

// NextDelivery returns the earliest next_ts of channel's pending
// deliveries, or 0 when none is pending.
func (db *DB) NextDelivery(ctx context.Context, channel string) (int64, error) {
	var next *int64
	err := db.reader.QueryRowContext(ctx, `SELECT MIN(next_ts) FROM alert_deliveries WHERE status = 'pending' AND channel = $1`, channel).Scan(&next)
	if err != nil {
		return 0, fmt.Errorf("next delivery: %w", err)
	}
	if next == nil {
		return 0, nil
	}
	return *next, nil
}

// FinishDeliveries writes the outcome of attempts (status, attempts,
// next_ts, updated_ts, error) in one transaction. Outcomes that are the
// same (a batch delivered at once: delivered, 1 attempt, one second) are
// written by one UPDATE ... WHERE id IN (...), up to 500 ids each: a
// statement per row was a tenth of the notifier's CPU in a burst.
func (db *DB) FinishDeliveries(ctx context.Context, ds []record.AlertDelivery) error {
	type outcome struct {
		status            string
		attempts          int
		nextTS, updatedTS int64
		errText           string
	}
	var order []outcome
	ids := map[outcome][]any{}
	for _, d := range ds {
		o := outcome{d.Status, d.Attempts, d.NextTS, d.UpdatedTS, cleanText(d.Error)}
		if _, ok := ids[o]; !ok {
			order = append(order, o)
		}
		ids[o] = append(ids[o], d.ID)
	}
	err := db.InTx(ctx, func(t *Tx) error {
		for _, o := range order {
			all := ids[o]
			for len(all) > 0 {
				chunk := all[:min(len(all), 500)]
				all = all[len(chunk):]
				var b strings.Builder
				b.WriteString(`UPDATE alert_deliveries SET status = $1, attempts = $2, next_ts = $3, updated_ts = $4, error = $5 WHERE id IN (`)
				for i := range chunk {
					if i > 0 {
						b.WriteString(", ")
					}
					fmt.Fprintf(&b, "$%d", i+6)
				}
				b.WriteString(")")
				args := append([]any{o.status, o.attempts, o.nextTS, o.updatedTS, o.errText}, chunk...)
				if _, err := t.tx.ExecContext(ctx, b.String(), args...); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish deliveries: %w", err)
	}
	return nil
}

// DeliveryFilter narrows the delivery log.
type DeliveryFilter struct {
	EventID int64  // 0 = any
	Channel string // "" = any
	Status  string // "" = any
	Limit   int    // 0 = 100
}

// Deliveries returns the delivery log, newest first.
func (db *DB) Deliveries(ctx context.Context, f DeliveryFilter) ([]record.AlertDelivery, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM alert_deliveries
		WHERE ($1 = 0 OR event_id = $1) AND ($2 = '' OR channel = $2) AND ($3 = '' OR status = $3)
		ORDER BY id DESC LIMIT $4`, f.EventID, f.Channel, f.Status, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("deliveries: %w", err)
	}
	return collectDeliveries(rows)
}

func collectDeliveries(rows interface {
	rowScanner
	Next() bool
	Err() error
	Close() error
}) ([]record.AlertDelivery, error) {
	defer rows.Close()
	out := []record.AlertDelivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// SetAlertExtRef stores the ticket reference of an event.
func (db *DB) SetAlertExtRef(ctx context.Context, id int64, ref string) error {
	if _, err := db.exec(ctx, `UPDATE alert_events SET ext_ref = $1 WHERE id = $2`, cleanText(ref), id); err != nil {
		return fmt.Errorf("set ext_ref of alert event %d: %w", id, err)
	}
	return nil
}

// GroupExtRef returns the ticket reference of an alert group: that of
// its earliest member holding one ("" when none).
func (db *DB) GroupExtRef(ctx context.Context, groupID int64) (string, error) {
	var ref string
	err := db.reader.QueryRowContext(ctx, `SELECT ext_ref FROM alert_events WHERE group_id = $1 AND ext_ref <> ''
		ORDER BY ts, id LIMIT 1`, groupID).Scan(&ref)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("ticket of alert group %d: %w", groupID, err)
	}
	return ref, nil
}

// SetGroupExtRef stores ref on every member of the group that holds no
// ticket reference yet.
func (db *DB) SetGroupExtRef(ctx context.Context, groupID int64, ref string) error {
	if _, err := db.exec(ctx, `UPDATE alert_events SET ext_ref = $1 WHERE group_id = $2 AND ext_ref = ''`, cleanText(ref), groupID); err != nil {
		return fmt.Errorf("set ext_ref of alert group %d: %w", groupID, err)
	}
	return nil
}

// GroupTicketHolders returns, for each distinct ticket reference held by
// the group's members, its earliest holder (a member may have had its
// own ticket before the correlator grouped it).
func (db *DB) GroupTicketHolders(ctx context.Context, groupID int64) ([]record.AlertEvent, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT `+alertEventColumns+` FROM alert_events WHERE group_id = $1 AND ext_ref <> ''
		ORDER BY ts, id`, groupID)
	if err != nil {
		return nil, fmt.Errorf("tickets of alert group %d: %w", groupID, err)
	}
	defer rows.Close()
	var out []record.AlertEvent
	seen := map[string]bool{}
	for rows.Next() {
		e, err := scanAlertEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("tickets of alert group %d: %w", groupID, err)
		}
		if !seen[e.ExtRef] {
			seen[e.ExtRef] = true
			out = append(out, e)
		}
	}
	return out, rows.Err()
}
