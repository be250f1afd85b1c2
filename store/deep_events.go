package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// deepEventSource is how one agent event type of GET /api/v1/events reads
// its per-minute table: one event per row, at the minute's start.
type deepEventSource struct {
	table string
	// filter narrows the table to the type ("" for none).
	filter string
	// keyExpr orders rows within a minute and names the event (its id).
	keyExpr string
	cols    string
	// scan reads a row (ts, agent_id, key, cols...) into e.
	scan func(r rowScanner, e *Event) error
	// The columns an EventFilter field applies to ("" for none).
	addrCol, portCol, protoCol, domainCol string
}

// filterClause is f's condition over src's columns, arguments from n.
// The caller has checked f.Applies for the type.
func (src deepEventSource) filterClause(f EventFilter, n int) (string, []any) {
	var q string
	var args []any
	add := func(col string, v any) {
		args = append(args, v)
		q += fmt.Sprintf(" AND %s = $%d", col, n+len(args)-1)
	}
	if f.Addr != "" && src.addrCol != "" {
		add(src.addrCol, f.Addr)
	}
	if f.Port != 0 && src.portCol != "" {
		add(src.portCol, f.Port)
	}
	if f.Proto != 0 && src.protoCol != "" {
		add(src.protoCol, protoText(f.Proto))
	}
	if f.Domain != "" && src.domainCol != "" {
		dq, dargs := domainClause(src.domainCol, f.Domain, n+len(args))
		q += dq
		args = append(args, dargs...)
	}
	return q, args
}

// DeepEventTypes are the agent observation types of GET /api/v1/events.
var DeepEventTypes = []string{"connection.seen", "dns.query", "http.host_observed", "tls.sni_observed"}

func l7Source(kind string) deepEventSource {
	return deepEventSource{table: "agent_l7_minutes", filter: " AND kind = '" + kind + "'",
		keyExpr: `(agent_id || '|' || host || '|' || process)`, cols: "host, process, bytes, hits", domainCol: "host",
		scan: func(r rowScanner, e *Event) error {
			var host, process string
			var bytes, hits int64
			err := r.Scan(&e.TS, &e.AgentID, &e.Key, &host, &process, &bytes, &hits)
			e.Data = map[string]any{"host": host, "process": process, "bytes": bytes, "hits": hits}
			return err
		}}
}

var deepEventSources = map[string]deepEventSource{
	"dns.query": {table: "agent_dns_minutes", keyExpr: `(agent_id || '|' || domain || '|' || process)`, cols: "domain, process, queries, responses", domainCol: "domain",
		scan: func(r rowScanner, e *Event) error {
			var domain, process string
			var queries, responses int64
			err := r.Scan(&e.TS, &e.AgentID, &e.Key, &domain, &process, &queries, &responses)
			e.Data = map[string]any{"domain": domain, "process": process, "queries": queries, "responses": responses}
			return err
		}},
	"tls.sni_observed":   l7Source("tls"),
	"http.host_observed": l7Source("http"),
	"connection.seen": {table: "agent_remote_minutes",
		keyExpr: `(agent_id || '|' || process || '|' || proto || '|' || remote_ip || '|' || remote_port)`,
		cols:    "process, proto, remote_ip, remote_port, bytes_in, bytes_out",
		addrCol: "remote_ip", portCol: "remote_port", protoCol: "proto",
		scan: func(r rowScanner, e *Event) error {
			var process, proto, ip string
			var port, in, out int64
			err := r.Scan(&e.TS, &e.AgentID, &e.Key, &process, &proto, &ip, &port, &in, &out)
			e.Data = map[string]any{"process": process, "proto": proto, "remote_ip": ip, "remote_port": port, "bytes_in": in, "bytes_out": out}
			return err
		}},
}

// DeepEvents returns the events of agent observation type typ (one of
// DeepEventTypes) in the scope, after the cursor, in the event order (ts
// descending, then id descending), at most limit, matching f (none when f
// names a field the type does not carry).
func (db *DB) DeepEvents(ctx context.Context, typ string, s DeepScope, f EventFilter, after *EventCursor, limit int) ([]Event, error) {
	src, ok := deepEventSources[typ]
	if !ok {
		return nil, fmt.Errorf("deep events: unknown type %q", typ)
	}
	if !f.Applies(typ) {
		return nil, nil
	}
	lo, err := db.deepEventsFrom(ctx, src, s, f, after, limit)
	if err != nil {
		return nil, fmt.Errorf("%s events: %w", typ, err)
	}
	s.From = max(s.From, lo)
	w, args := s.where()
	fq, fargs := src.filterClause(f, len(args)+1)
	w += fq
	args = append(args, fargs...)
	cl, cargs := cursorClause(after, typ, src.keyExpr, len(args)+1)
	args = append(args, cargs...)
	args = append(args, limit)
	q := `SELECT ts, agent_id, ` + src.keyExpr + `, ` + src.cols + ` FROM ` + src.table + w + src.filter + cl +
		fmt.Sprintf(` ORDER BY ts DESC, %s DESC LIMIT $%d`, src.keyExpr, len(args))
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s events: %w", typ, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e := Event{Type: typ}
		if err := src.scan(rows, &e); err != nil {
			return nil, fmt.Errorf("%s events: %w", typ, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// deepEventsFrom bounds the minutes a page of src's events can come from,
// so that the sort by key reads the newest minutes only, not a whole
// window (a fleet's minute holds hundreds of thousands of rows): the page
// lies within the rows of the cursor's own minute and the newest minutes,
// older than it, that hold limit rows. It returns s.From when there are
// fewer.
func (db *DB) deepEventsFrom(ctx context.Context, src deepEventSource, s DeepScope, f EventFilter, after *EventCursor, limit int) (int64, error) {
	w, args := s.where()
	fq, fargs := src.filterClause(f, len(args)+1)
	w += fq
	args = append(args, fargs...)
	q := `SELECT ts FROM ` + src.table + w + src.filter
	if after != nil {
		args = append(args, after.TS)
		q += fmt.Sprintf(` AND ts < $%d`, len(args))
	}
	args = append(args, limit-1)
	var ts int64
	err := db.reader.QueryRowContext(ctx, q+fmt.Sprintf(` ORDER BY ts DESC LIMIT 1 OFFSET $%d`, len(args)), args...).Scan(&ts)
	if errors.Is(err, sql.ErrNoRows) {
		return s.From, nil
	}
	return ts, err
}
