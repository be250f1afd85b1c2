package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"netmon/store/flowagg"
)

// FlowRow is a flow aggregate as the API shows it (spec 2.11).
type FlowRow struct {
	TS       int64  `json:"ts"` // last seen
	Device   string `json:"device"`
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	SrcPort  int    `json:"src_port"`
	DstPort  int    `json:"dst_port"`
	Proto    int    `json:"proto"`
	Packets  int64  `json:"packets"`
	Octets   int64  `json:"octets"`
	Flows    int64  `json:"flows"`
	First    int64  `json:"first_seen"`
	LastSeen int64  `json:"-"`
	// Truncated marks the last row of an answer that does not list all of
	// its window (more groups than the limit, or 5-tuples whose detail the
	// store did not keep): it carries the rest's sums (src and dst empty;
	// first and last seen are the window's), so the rows always add up to
	// the window's exact totals.
	Truncated bool `json:"truncated,omitempty" jsonschema:"description=set on the last row when the rows above do not cover the window (the limit, or detail the store did not keep): it sums the rest (src and dst empty), so the rows add up to the window's totals"`
}

// Conversation is a group of flows (spec 4.10 conversations).
type Conversation struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	SrcPort  int    `json:"src_port,omitempty"`
	DstPort  int    `json:"dst_port,omitempty"`
	Proto    int    `json:"proto,omitempty"`
	Packets  int64  `json:"packets"`
	Octets   int64  `json:"octets"`
	Flows    int64  `json:"flows"`
	First    int64  `json:"first_seen"`
	LastSeen int64  `json:"last_seen"`
	// Truncated: as FlowRow.Truncated.
	Truncated bool `json:"truncated,omitempty" jsonschema:"description=set on the last row when the rows above do not cover the window (the limit, or detail the store did not keep): it sums the rest (src and dst empty), so the rows add up to the window's totals"`
}

// siteClause limits exporters to a site's devices: an exporter with no
// device belongs to no site and is seen only by unbound identities.
func siteClause(site string, arg int) string {
	if site == "" {
		return ""
	}
	return fmt.Sprintf(` AND exporter IN (SELECT host FROM devices WHERE site = $%d AND host <> '')`, arg)
}

// flowQuerier is a read connection or a read transaction.
type flowQuerier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// remainder returns what the rows of an answer leave out of their
// window's totals (the sums of every row of src matching where, other
// rows included, less what listed holds): nil when nothing. Its first and
// last times are the window's.
func remainder(ctx context.Context, db flowQuerier, src, where string, listed Conversation, args ...any) (*Conversation, error) {
	rows, err := db.QueryContext(ctx, `SELECT COALESCE(SUM(packets), 0), COALESCE(SUM(octets), 0), COALESCE(SUM(flows), 0), COALESCE(MIN(first_seen), 0), COALESCE(MAX(last_seen), 0)
		FROM `+src+` WHERE 1 = 1`+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var c Conversation
	if rows.Next() {
		if err := rows.Scan(&c.Packets, &c.Octets, &c.Flows, &c.First, &c.LastSeen); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	c.Packets -= listed.Packets
	c.Octets -= listed.Octets
	c.Flows -= listed.Flows
	if c.Flows <= 0 {
		return nil, nil
	}
	c.Truncated = true
	return &c, nil
}

// TopFlows sums the flows since from per exporter and 5-tuple matching f,
// octets descending, then (Truncated) the remainder the store keeps no
// detail of (with an address, port or protocol in f: of the detail it
// kept, since the other rows carry none). The open minutes, not written
// yet, are summed with the stored ones (flows_open.go).
func (db *DB) TopFlows(ctx context.Context, from int64, limit int, site string, f FlowFilter, open []flowagg.Minute) ([]FlowRow, error) {
	args := []any{from - from%60}
	where := ` AND ts >= $1`
	if site != "" {
		args = append(args, site)
		where += siteClause(site, len(args))
	}
	fc, fargs := f.clause(len(args) + 1)
	where += fc
	args = append(args, fargs...)
	src, where, args, err := db.withOpen("flow_minutes", where, args, open)
	if err != nil {
		return nil, err
	}
	q := fmt.Sprintf(`SELECT MAX(last_seen), exporter, src, dst, src_port, dst_port, proto, SUM(packets), SUM(octets), SUM(flows), MIN(first_seen)
		FROM %s WHERE src <> ''%s
		GROUP BY exporter, src, dst, src_port, dst_port, proto
		ORDER BY SUM(octets) DESC, exporter, src, dst, src_port, dst_port, proto LIMIT $%d`, src, where, len(args)+1)
	out, err := db.flowRows(ctx, q, append(args[:len(args):len(args)], limit)...)
	if err != nil {
		return nil, err
	}
	var listed Conversation
	for _, r := range out {
		listed.Packets += r.Packets
		listed.Octets += r.Octets
		listed.Flows += r.Flows
	}
	rest, err := remainder(ctx, db.reader, src, where, listed, args...)
	if err != nil {
		return nil, fmt.Errorf("query flows: %w", err)
	}
	if rest != nil {
		out = append(out, FlowRow{TS: rest.LastSeen, Packets: rest.Packets, Octets: rest.Octets, Flows: rest.Flows, First: rest.First, LastSeen: rest.LastSeen, Truncated: true})
	}
	return out, nil
}

func (db *DB) flowRows(ctx context.Context, q string, args ...any) ([]FlowRow, error) {
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("query flows: %w", err)
	}
	defer rows.Close()
	out := []FlowRow{}
	for rows.Next() {
		var r FlowRow
		if err := rows.Scan(&r.TS, &r.Device, &r.Src, &r.Dst, &r.SrcPort, &r.DstPort, &r.Proto, &r.Packets, &r.Octets, &r.Flows, &r.First); err != nil {
			return nil, fmt.Errorf("query flows: %w", err)
		}
		r.LastSeen = r.TS
		out = append(out, r)
	}
	return out, rows.Err()
}

// PairFlows returns the minute sums between a and b in both directions
// since from, newest first, at most limit (a late flow's rows are summed
// with their minute's), the open minutes included (as TopFlows).
func (db *DB) PairFlows(ctx context.Context, a, b string, from int64, limit int, site string, open []flowagg.Minute) ([]FlowRow, error) {
	args := []any{from - from%60, a, b, limit}
	where := ` AND ts >= $1 AND ((src = $2 AND dst = $3) OR (src = $3 AND dst = $2))`
	if site != "" {
		args = append(args, site)
		where += siteClause(site, 5)
	}
	src, where, args, err := db.withOpen("flow_minutes", where, args, open)
	if err != nil {
		return nil, err
	}
	q := `SELECT MAX(last_seen), exporter, src, dst, src_port, dst_port, proto, SUM(packets), SUM(octets), SUM(flows), MIN(first_seen)
		FROM ` + src + ` WHERE 1 = 1` + where + `
		GROUP BY ts, exporter, src, dst, src_port, dst_port, proto
		ORDER BY ts DESC, exporter, src, dst, src_port, dst_port, proto LIMIT $4`
	return db.flowRows(ctx, q, args...)
}

// ConversationOrder maps the API's sort names to SQL.
var ConversationOrder = map[string]string{
	"octets": "SUM(octets) DESC", "packets": "SUM(packets) DESC", "flows": "SUM(flows) DESC", "last_seen": "MAX(last_seen) DESC",
}

// Conversations groups the flows since from by 5-tuple (by5 true) or by
// address pair (directions still apart; the caller merges them), sorted by
// sort (a key of ConversationOrder), at most limit groups, then
// (Truncated) the remainder the store keeps no detail of; only the rows
// matching f (as TopFlows), the open minutes included (as TopFlows).
func (db *DB) Conversations(ctx context.Context, from int64, by5 bool, sort string, limit int, site string, f FlowFilter, open []flowagg.Minute) ([]Conversation, error) {
	args := []any{from - from%60}
	where := ` AND ts >= $1`
	if site != "" {
		args = append(args, site)
		where += siteClause(site, 2)
	}
	fc, fargs := f.clause(len(args) + 1)
	where += fc
	args = append(args, fargs...)
	src, where, args, err := db.withOpen("flow_minutes", where, args, open)
	if err != nil {
		return nil, err
	}
	return db.conversations(ctx, db.reader, src, where, args, by5, sort, limit)
}

// conversations runs the grouped query and the remainder over src (a
// table or a subquery with the flow columns) filtered by where, whose
// arguments are args.
func (db *DB) conversations(ctx context.Context, qr flowQuerier, src, where string, args []any, by5 bool, sort string, limit int) ([]Conversation, error) {
	order, ok := ConversationOrder[sort]
	if !ok {
		return nil, fmt.Errorf("conversations: unknown sort %q", sort)
	}
	cols := "src, dst"
	if by5 {
		cols = "src, dst, src_port, dst_port, proto"
	}
	q := fmt.Sprintf(`SELECT %s, SUM(packets), SUM(octets), SUM(flows), MIN(first_seen), MAX(last_seen)
		FROM %s WHERE src <> ''%s GROUP BY %s ORDER BY %s, %s LIMIT $%d`, cols, src, where, cols, order, cols, len(args)+1)
	rows, err := qr.QueryContext(ctx, q, append(args[:len(args):len(args)], limit)...)
	if err != nil {
		return nil, fmt.Errorf("conversations: %w", err)
	}
	defer rows.Close()
	out := []Conversation{}
	for rows.Next() {
		var c Conversation
		dest := []any{&c.Src, &c.Dst}
		if by5 {
			dest = append(dest, &c.SrcPort, &c.DstPort, &c.Proto)
		}
		dest = append(dest, &c.Packets, &c.Octets, &c.Flows, &c.First, &c.LastSeen)
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("conversations: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("conversations: %w", err)
	}
	var listed Conversation
	for _, c := range out {
		listed.Packets += c.Packets
		listed.Octets += c.Octets
		listed.Flows += c.Flows
	}
	rest, err := remainder(ctx, qr, src, where, listed, args...)
	if err != nil {
		return nil, fmt.Errorf("conversations: %w", err)
	}
	if rest != nil {
		out = append(out, *rest)
	}
	return out, nil
}

// ConversationsHourly is Conversations since the start of fromHour's hour
// for long windows: the hours already rolled up are read from flow_hours
// (a bounded number of rows per exporter and hour), the hours not yet
// built from their minutes, in one snapshot so that an hour being built
// meanwhile is counted once. Totals are exact; detail beyond the hour
// budget is in the Truncated remainder. The open minutes, in no table
// yet, are added as in TopFlows.
func (db *DB) ConversationsHourly(ctx context.Context, fromHour int64, by5 bool, sort string, limit int, site string, f FlowFilter, openMinutes []flowagg.Minute) (out []Conversation, err error) {
	fromHour -= fromHour % 3600
	opts := &sql.TxOptions{ReadOnly: true}
	if db.dialect == Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	} else {
		opts = nil
	}
	tx, err := db.reader.BeginTx(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("conversations: %w", err)
	}
	defer func() { err = errors.Join(err, tx.Rollback()) }()
	rows, err := tx.QueryContext(ctx, `SELECT ts FROM flow_hour_state WHERE built = 0 AND ts >= $1 ORDER BY ts`, fromHour)
	if err != nil {
		return nil, fmt.Errorf("conversations: %w", err)
	}
	var open []string
	for rows.Next() {
		var h int64
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return nil, fmt.Errorf("conversations: %w", err)
		}
		open = append(open, fmt.Sprintf("(ts >= %d AND ts < %d)", h, h+3600))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("conversations: %w", err)
	}
	args := []any{fromHour}
	site1 := ""
	if site != "" {
		args = append(args, site)
		site1 = siteClause(site, 2)
	}
	// The filter applies to both halves of the union (its arguments are
	// shared, numbered after the site's).
	fc, fargs := f.clause(len(args) + 1)
	site1 += fc
	args = append(args, fargs...)
	const cols = `exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, first_seen, last_seen`
	src := `(SELECT ` + cols + ` FROM flow_hours WHERE ts >= $1` + site1
	if len(open) > 0 {
		// The hour numbers are integers of ours, not input.
		src += ` UNION ALL SELECT ` + cols + ` FROM flow_minutes WHERE ts >= $1 AND (` + strings.Join(open, " OR ") + `)` + site1
	}
	if len(openMinutes) > 0 {
		raw, err := openJSON(openMinutes)
		if err != nil {
			return nil, fmt.Errorf("conversations: %w", err)
		}
		args = append(args, raw)
		src += ` UNION ALL SELECT ` + cols + ` FROM (` + openRowsSQL(db.dialect, len(args)) + `) AS o WHERE ts >= $1` + site1
	}
	src += `) AS w`
	return db.conversations(ctx, tx, src, "", args, by5, sort, limit)
}
