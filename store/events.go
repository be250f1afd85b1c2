package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
)

// Event is a normalised observation of GET /api/v1/events.
type Event struct {
	Type    string         `json:"type"`
	TS      int64          `json:"ts"`
	Device  string         `json:"device"`
	AgentID int64          `json:"agent_id"`
	Key     string         `json:"id"`
	Data    map[string]any `json:"data"`
}

// EventCursor is a position in the event order: ts descending, then type
// ascending, then key descending. Events after it are returned.
type EventCursor struct {
	TS   int64
	Type string
	Key  string
}

// cursorClause is the SQL condition "after the cursor" for a source of
// type typ whose key expression is keyExpr, with args starting at n.
func cursorClause(c *EventCursor, typ, keyExpr string, n int) (string, []any) {
	if c == nil {
		return "", nil
	}
	switch {
	case typ < c.Type:
		return fmt.Sprintf(" AND ts < $%d", n), []any{c.TS}
	case typ == c.Type:
		return fmt.Sprintf(" AND (ts < $%d OR (ts = $%d AND %s < $%d))", n, n, keyExpr, n+1), []any{c.TS, c.Key}
	}
	return fmt.Sprintf(" AND ts <= $%d", n), []any{c.TS}
}

// flowKeyExpr orders flow rows within a minute; both engines concatenate
// text and integers with ||.
const flowKeyExpr = `(exporter || '|' || src || '|' || dst || '|' || src_port || '|' || dst_port || '|' || proto)`

// FlowEvents returns netflow.flow events since since, after the cursor.
// Other rows (src ”) are no flow; a late flow's rows are summed with
// their minute's, so each (minute, 5-tuple) is one event. Summing needs a
// GROUP BY, which would read the whole window: the newest minutes that
// can fill the page are found first through the ts index (a page of
// groups needs at most a page of rows), and only they are grouped.
// Only the rows matching f are events (f.Exporter is the device).
func (db *DB) FlowEvents(ctx context.Context, since int64, f FlowFilter, after *EventCursor, limit int, site string) ([]Event, error) {
	where := ` AND src <> ''`
	args := []any{since - since%60}
	fc, fargs := f.clause(len(args) + 1)
	where += fc
	args = append(args, fargs...)
	cl, cargs := cursorClause(after, "netflow.flow", flowKeyExpr, len(args)+1)
	where += cl
	args = append(args, cargs...)
	if site != "" {
		where += siteClause(site, len(args)+1)
		args = append(args, site)
	}
	from := args[0].(int64)
	var cut int64
	err := db.reader.QueryRowContext(ctx, fmt.Sprintf(`SELECT ts FROM flow_minutes WHERE ts >= $1%s ORDER BY ts DESC LIMIT 1 OFFSET $%d`, where, len(args)+1),
		append(args[:len(args):len(args)], max(limit-1, 0))...).Scan(&cut)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		cut = from // fewer rows than a page: group them all
	case err != nil:
		return nil, fmt.Errorf("flow events: %w", err)
	}
	out, err := db.flowEvents(ctx, cut, where, args, limit)
	if err == nil && len(out) < limit && cut > from {
		// Late rows of the same minute and 5-tuple merged below a page:
		// group the whole window after all.
		out, err = db.flowEvents(ctx, from, where, args, limit)
	}
	return out, err
}

func (db *DB) flowEvents(ctx context.Context, from int64, where string, args []any, limit int) ([]Event, error) {
	args = append([]any{from}, args[1:]...)
	args = append(args, limit)
	q := `SELECT ts, exporter, src, dst, src_port, dst_port, proto, SUM(packets), SUM(octets), SUM(flows), ` + flowKeyExpr + ` FROM flow_minutes WHERE ts >= $1` + where +
		fmt.Sprintf(" GROUP BY ts, exporter, src, dst, src_port, dst_port, proto ORDER BY ts DESC, %s DESC LIMIT $%d", flowKeyExpr, len(args))
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("flow events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var ts, packets, octets, flows int64
		var exporter, src, dst, key string
		var sp, dp, proto int
		if err := rows.Scan(&ts, &exporter, &src, &dst, &sp, &dp, &proto, &packets, &octets, &flows, &key); err != nil {
			return nil, fmt.Errorf("flow events: %w", err)
		}
		out = append(out, Event{Type: "netflow.flow", TS: ts, Device: exporter, Key: key, Data: map[string]any{
			"src": src, "dst": dst, "src_port": sp, "dst_port": dp, "proto": proto, "packets": packets, "octets": octets, "flows": flows,
		}})
	}
	return out, rows.Err()
}

// syslogKeyExpr orders syslog rows: the id, zero-padded so that text
// order is numeric order.
func syslogKey(id int64) string { return fmt.Sprintf("%020d", id) }

// SyslogEvents returns syslog.received events since since, after the
// cursor, from source device and addr when they are not "" (both name the
// sender's address: the device filter and the address filter).
func (db *DB) SyslogEvents(ctx context.Context, since int64, device, addr string, after *EventCursor, limit int, site string) ([]Event, error) {
	q := `SELECT id, ts, host, source, severity, facility, tag, message FROM syslog_events WHERE ts >= $1`
	args := []any{since}
	for _, v := range []string{device, addr} {
		if v != "" {
			args = append(args, v)
			q += fmt.Sprintf(" AND source = $%d", len(args))
		}
	}
	if after != nil {
		// The key is the id: compare numerically.
		var id int64
		if after.Type == "syslog.received" {
			id, _ = strconv.ParseInt(after.Key, 10, 64)
		}
		cl, cargs := cursorClause(after, "syslog.received", "id", len(args)+1)
		if after.Type == "syslog.received" {
			cargs[1] = id
		}
		q += cl
		args = append(args, cargs...)
	}
	if site != "" {
		args = append(args, site)
		q += fmt.Sprintf(` AND source IN (SELECT host FROM devices WHERE site = $%d AND host <> '')`, len(args))
	}
	args = append(args, limit)
	q += fmt.Sprintf(" ORDER BY ts DESC, id DESC LIMIT $%d", len(args))
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("syslog events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var id, ts int64
		var host, source, tag, msg string
		var sev, fac int
		if err := rows.Scan(&id, &ts, &host, &source, &sev, &fac, &tag, &msg); err != nil {
			return nil, fmt.Errorf("syslog events: %w", err)
		}
		out = append(out, Event{Type: "syslog.received", TS: ts, Device: source, Key: syslogKey(id), Data: map[string]any{
			"id": id, "host": host, "severity": sev, "facility": fac, "tag": tag, "message": msg,
		}})
	}
	return out, rows.Err()
}
