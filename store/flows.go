package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"netmon/store/record"
)

// FlowTables and SyslogTables are the raw time series of this file, for
// the retention loop.
var (
	FlowTables   = []string{"flow_minutes", "flow_hours"}
	SyslogTables = []string{"syslog_events"}
)

// flowKey is one row of flow_minutes or flow_hours. Addresses stay
// netip.Addr (comparable, no allocation) until a row is written: turning
// every record's addresses into strings cost more than the rest of the
// aggregation.
type flowKey struct {
	ts                 int64
	exporter, src, dst netip.Addr
	srcPort, dstPort   uint16
	proto              uint8
}

type flowSums struct {
	packets, octets, flows uint64
	last                   int64
}

// WriteFlows adds a batch of flow records to their minutes and hours in
// one transaction: records of the same period, exporter and 5-tuple are
// summed in memory first, then added to the stored rows (or create them).
// It returns the number of minute rows touched.
func (db *DB) WriteFlows(ctx context.Context, fs []record.Flow) (int, error) {
	return db.WriteFlowBatches(ctx, [][]record.Flow{fs})
}

// WriteFlowBatches is WriteFlows for several batches at once, as the
// ingest queue gathers them: summing them where they lie saves copying
// every record into one slice first.
func (db *DB) WriteFlowBatches(ctx context.Context, batches [][]record.Flow) (int, error) {
	n := 0
	for _, fs := range batches {
		n += len(fs)
	}
	if n == 0 {
		return 0, nil
	}
	minutes, hours := aggregateFlows(batches, n)
	rows := len(minutes)
	if err := db.writeFlowSums(ctx, minutes, hours); err != nil {
		return 0, fmt.Errorf("write flows: %w", err)
	}
	return rows, nil
}

// aggregateFlows sums records per minute, then the minutes per hour: the
// hour map is built from the (far fewer) minute rows, so each record is
// hashed once.
func aggregateFlows(batches [][]record.Flow, n int) (minutes, hours map[flowKey]*flowSums) {
	// A modest size hint: batches repeat conversations, and a map sized for
	// every record would be mostly empty memory to clear. Sums come from
	// one slab rather than an allocation each.
	minutes = make(map[flowKey]*flowSums, min(n/8+1, 16384))
	var slab []flowSums
	newSums := func() *flowSums {
		if len(slab) == cap(slab) {
			slab = make([]flowSums, 0, 1024)
		}
		slab = slab[:len(slab)+1]
		return &slab[len(slab)-1]
	}
	for _, fs := range batches {
		for i := range fs {
			f := &fs[i]
			k := flowKey{ts: f.TS - f.TS%60, exporter: f.Exporter, src: f.Src, dst: f.Dst, srcPort: f.SrcPort, dstPort: f.DstPort, proto: f.Proto}
			s := minutes[k]
			if s == nil {
				s = newSums()
				minutes[k] = s
			}
			s.packets += f.Packets
			s.octets += f.Octets
			s.flows++
			s.last = max(s.last, f.TS)
		}
	}
	hours = make(map[flowKey]*flowSums, len(minutes))
	for k, m := range minutes {
		k.ts -= k.ts % 3600
		s := hours[k]
		if s == nil {
			s = newSums()
			hours[k] = s
		}
		s.packets += m.packets
		s.octets += m.octets
		s.flows += m.flows
		s.last = max(s.last, m.last)
	}
	return minutes, hours
}

// upsertSQL is the upsert of rows aggregates into table (flow_minutes or
// flow_hours, a constant of this file: never user input).
func upsertSQL(d Dialect, table string, rows int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO ` + table + ` (ts, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, last_seen) VALUES `)
	writeRows(&b, d, rows, 11, nil)
	b.WriteString(` ON CONFLICT (ts, exporter, src, dst, src_port, dst_port, proto) DO UPDATE SET
			packets = ` + table + `.packets + excluded.packets,
			octets = ` + table + `.octets + excluded.octets,
			flows = ` + table + `.flows + excluded.flows,
			last_seen = CASE WHEN excluded.last_seen > ` + table + `.last_seen THEN excluded.last_seen ELSE ` + table + `.last_seen END`)
	return b.String()
}

// syslogChunk is how many syslog rows are inserted between two looks for
// a waiting priority writer (a few milliseconds of work).
const syslogChunk = 1024

// WriteSyslog inserts syslog events as bulk ingest (see DB.ingest). It
// returns how many of es are committed, also on error: retry only the
// rest.
func (db *DB) WriteSyslog(ctx context.Context, es []record.SyslogEvent) (int, error) {
	n, err := db.ingest(ctx, len(es), syslogChunk, func(tx *sql.Tx, from, to int) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO syslog_events (ts, host, source, severity, facility, tag, message, raw) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i := from; i < to; i++ {
			e := &es[i]
			src := ""
			if e.Source.IsValid() {
				src = e.Source.String()
			}
			var raw any // NULL for a clean message: it costs nothing
			if e.Raw != nil {
				raw = e.Raw
			}
			if _, err := stmt.ExecContext(ctx, e.TS, cleanText(e.Host), src, int(e.Severity), int(e.Facility), cleanText(e.Tag), cleanText(e.Message), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("write syslog: %w", err)
	}
	return n, nil
}

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
}

// siteClause limits exporters to a site's devices: an exporter with no
// device belongs to no site and is seen only by unbound identities.
func siteClause(site string, arg int) string {
	if site == "" {
		return ""
	}
	return fmt.Sprintf(` AND exporter IN (SELECT host FROM devices WHERE site = $%d AND host <> '')`, arg)
}

// TopFlows sums the flows since from per exporter and 5-tuple, octets
// descending.
func (db *DB) TopFlows(ctx context.Context, from int64, limit int, site string) ([]FlowRow, error) {
	q := `SELECT MAX(last_seen), exporter, src, dst, src_port, dst_port, proto, SUM(packets), SUM(octets), SUM(flows), MIN(ts)
		FROM flow_minutes WHERE ts >= $1` + siteClause(site, 3) + `
		GROUP BY exporter, src, dst, src_port, dst_port, proto
		ORDER BY SUM(octets) DESC, exporter, src, dst, src_port, dst_port, proto LIMIT $2`
	args := []any{from - from%60, limit}
	if site != "" {
		args = append(args, site)
	}
	return db.flowRows(ctx, q, args...)
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
		out = append(out, r)
	}
	return out, rows.Err()
}

// PairFlows returns the minute rows between a and b in both directions
// since from, newest first, at most limit.
func (db *DB) PairFlows(ctx context.Context, a, b string, from int64, limit int, site string) ([]FlowRow, error) {
	q := `SELECT last_seen, exporter, src, dst, src_port, dst_port, proto, packets, octets, flows, ts
		FROM flow_minutes WHERE ts >= $1 AND ((src = $2 AND dst = $3) OR (src = $3 AND dst = $2))` + siteClause(site, 5) + `
		ORDER BY ts DESC, exporter, src, dst, src_port, dst_port, proto LIMIT $4`
	args := []any{from - from%60, a, b, limit}
	if site != "" {
		args = append(args, site)
	}
	return db.flowRows(ctx, q, args...)
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
}

// ConversationOrder maps the API's sort names to SQL.
var ConversationOrder = map[string]string{
	"octets": "SUM(octets) DESC", "packets": "SUM(packets) DESC", "flows": "SUM(flows) DESC", "last_seen": "MAX(last_seen) DESC",
}

// Conversations groups the flows since from by 5-tuple (by5 true) or by
// address pair (directions still apart; the caller merges them), sorted by
// sort (a key of ConversationOrder), at most limit groups.
func (db *DB) Conversations(ctx context.Context, from int64, by5 bool, sort string, limit int, site string) ([]Conversation, error) {
	order, ok := ConversationOrder[sort]
	if !ok {
		return nil, fmt.Errorf("conversations: unknown sort %q", sort)
	}
	cols := "src, dst"
	if by5 {
		cols = "src, dst, src_port, dst_port, proto"
	}
	q := `SELECT ` + cols + `, SUM(packets), SUM(octets), SUM(flows), MIN(ts), MAX(last_seen)
		FROM flow_minutes WHERE ts >= $1` + siteClause(site, 3) + ` GROUP BY ` + cols + ` ORDER BY ` + order + `, ` + cols + ` LIMIT $2`
	args := []any{from - from%60, limit}
	if site != "" {
		args = append(args, site)
	}
	return db.conversationRows(ctx, by5, q, args...)
}

// SyslogRow is a stored syslog event (spec 2.11).
type SyslogRow struct {
	ID       int64  `json:"id"`
	TS       int64  `json:"ts"`
	Host     string `json:"host"`
	Severity int    `json:"severity"`
	Tag      string `json:"tag"`
	Message  string `json:"message"`
	Facility int    `json:"facility"`
	Source   string `json:"source"`
	// Raw is the datagram as received when it held bytes the text columns
	// cannot (invalid UTF-8, NUL: U+FFFD in the text), base64 in JSON;
	// nil, and absent from JSON, for a clean message.
	Raw []byte `json:"raw_b64,omitempty" jsonschema:"description=the datagram as received (base64) when invalid UTF-8 or NUL bytes were replaced in host/tag/message; absent otherwise"`
}

// ListSyslog returns the newest events (id < before when before > 0),
// limited to a site's devices when site is set.
func (db *DB) ListSyslog(ctx context.Context, limit int, before int64, since int64, site string) ([]SyslogRow, error) {
	q := `SELECT id, ts, host, severity, tag, message, facility, source, raw FROM syslog_events WHERE ts >= $1`
	args := []any{since, limit}
	if before > 0 {
		args = append(args, before)
		q += fmt.Sprintf(` AND id < $%d`, len(args))
	}
	if site != "" {
		args = append(args, site)
		q += fmt.Sprintf(` AND source IN (SELECT host FROM devices WHERE site = $%d AND host <> '')`, len(args))
	}
	q += ` ORDER BY id DESC LIMIT $2`
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list syslog: %w", err)
	}
	defer rows.Close()
	out := []SyslogRow{}
	for rows.Next() {
		var r SyslogRow
		if err := rows.Scan(&r.ID, &r.TS, &r.Host, &r.Severity, &r.Tag, &r.Message, &r.Facility, &r.Source, &r.Raw); err != nil {
			return nil, fmt.Errorf("list syslog: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// FlowTemplate is a persisted v9/IPFIX template; Body is its JSON.
type FlowTemplate struct {
	Exporter string
	Domain   int64
	ID       int
	Version  int
	Body     string
}

// SaveFlowTemplates replaces the stored templates with ts.
func (db *DB) SaveFlowTemplates(ctx context.Context, ts []FlowTemplate) error {
	return db.InTx(ctx, func(wtx *Tx) error {
		tx := wtx.SQL()
		if _, err := tx.ExecContext(ctx, `DELETE FROM flow_templates`); err != nil {
			return err
		}
		now := time.Now().Unix()
		for _, t := range ts {
			if _, err := tx.ExecContext(ctx, `INSERT INTO flow_templates (exporter, domain, id, version, body, updated_at) VALUES ($1, $2, $3, $4, $5, $6)`,
				t.Exporter, t.Domain, t.ID, t.Version, t.Body, now); err != nil {
				return fmt.Errorf("save flow template: %w", err)
			}
		}
		return nil
	})
}

// FlowTemplates returns the stored templates.
func (db *DB) FlowTemplates(ctx context.Context) ([]FlowTemplate, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT exporter, domain, id, version, body FROM flow_templates ORDER BY exporter, domain, id`)
	if err != nil {
		return nil, fmt.Errorf("read flow templates: %w", err)
	}
	defer rows.Close()
	var out []FlowTemplate
	for rows.Next() {
		var t FlowTemplate
		if err := rows.Scan(&t.Exporter, &t.Domain, &t.ID, &t.Version, &t.Body); err != nil {
			return nil, fmt.Errorf("read flow templates: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// hourSortColumns are the flow_hours columns each hour's top rows are
// read by (each has an index on (ts, column)).
var hourSortColumns = map[string]string{"octets": "octets", "packets": "packets", "flows": "flows", "last_seen": "last_seen"}

// ConversationsHourly is Conversations over whole hours (fromHour to
// toHour inclusive, hour starts) from flow_hours, reading only the
// perHour top rows of each hour by the sort column. Heavy hitters are
// exact; a conversation that is never among an hour's top perHour is left
// out or undercounted. It keeps a 24-hour query to 24 index range scans
// whatever the number of distinct conversations.
func (db *DB) ConversationsHourly(ctx context.Context, fromHour, toHour int64, by5 bool, sort string, perHour, limit int, site string) ([]Conversation, error) {
	col, ok := hourSortColumns[sort]
	if !ok {
		return nil, fmt.Errorf("conversations: unknown sort %q", sort)
	}
	cols := "src, dst"
	if by5 {
		cols = "src, dst, src_port, dst_port, proto"
	}
	args := []any{perHour, limit}
	siteArg := 0
	if site != "" {
		args = append(args, site)
		siteArg = len(args)
	}
	var subs []string
	for h := fromHour - fromHour%3600; h <= toHour; h += 3600 {
		args = append(args, h)
		sub := fmt.Sprintf(`SELECT * FROM (SELECT src, dst, src_port, dst_port, proto, packets, octets, flows, ts, last_seen FROM flow_hours WHERE ts = $%d`, len(args))
		if siteArg > 0 {
			sub += siteClause(site, siteArg)
		}
		sub += fmt.Sprintf(` ORDER BY %s DESC LIMIT $1) AS h%d`, col, len(subs))
		subs = append(subs, sub)
	}
	if len(subs) == 0 {
		return []Conversation{}, nil
	}
	q := `SELECT ` + cols + `, SUM(packets), SUM(octets), SUM(flows), MIN(ts), MAX(last_seen) FROM (` +
		strings.Join(subs, ` UNION ALL `) + `) AS t GROUP BY ` + cols + ` ORDER BY ` + ConversationOrder[sort] + `, ` + cols + ` LIMIT $2`
	return db.conversationRows(ctx, by5, q, args...)
}

// conversationRows runs a conversation query whose columns are the group
// (src, dst and, by 5-tuple, the ports and protocol) then the sums.
func (db *DB) conversationRows(ctx context.Context, by5 bool, q string, args ...any) ([]Conversation, error) {
	rows, err := db.reader.QueryContext(ctx, q, args...)
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
	return out, rows.Err()
}
