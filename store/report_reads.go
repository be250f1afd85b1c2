package store

// Reads of the reports' builder (app/reports, spec 4.3 "Report content").
// Every read is bounded by a [From, To) window and aggregated in SQL
// (GROUP BY, LIMIT): a 90-day report never loads raw rows into Go. Each
// top-N read also returns the number of groups (COUNT(*) OVER () after
// the GROUP BY), so the report can say "and N more" without a second scan.
//
// Site scope, as the other reads take it: agents' rows through the
// agents of the site, flows through the exporter's device site
// (siteClause), alerts and incidents by their own site column. The hub's
// own capture (traffic_minutes) belongs to no site: a site report leaves
// it out.

import (
	"context"
	"fmt"
)

// ReportScope is the window and site of a report read.
type ReportScope struct {
	// From and To bound the window, Unix seconds, To excluded.
	From, To int64
	// Site keeps one site's rows ("" = every site).
	Site string
}

// agentSite is the condition keeping agent_id of the scope's site,
// numbered arg; "" without a site.
func (s ReportScope) agentSite(arg int) string {
	if s.Site == "" {
		return ""
	}
	return fmt.Sprintf(` AND agent_id IN (SELECT id FROM agents WHERE site = $%d)`, arg)
}

// args are $1 From, $2 To and, with a site, $3 Site.
func (s ReportScope) args() []any {
	if s.Site == "" {
		return []any{s.From, s.To}
	}
	return []any{s.From, s.To, s.Site}
}

// ReportMinute is one minute of the traffic in scope: received and sent
// bytes, the hub capture's plus every agent's.
type ReportMinute struct {
	TS     int64
	RxByte float64
	TxByte float64
}

// reportTrafficSQL is the minutes in scope: the hub capture's minutes
// (every-site scope only) and each agent's minute, its samples' mean
// rate times 60 s (as RateMinutes averages them).
func reportTrafficSQL(s ReportScope) string {
	agents := `SELECT ts - ts % 60 AS m, CAST(AVG(rx_bps) * 60 AS DOUBLE PRECISION) AS rx, CAST(AVG(tx_bps) * 60 AS DOUBLE PRECISION) AS tx
		FROM agent_samples WHERE ts >= $1 AND ts < $2 AND has_rate` + s.agentSite(3) + ` GROUP BY agent_id, ts - ts % 60`
	if s.Site != "" {
		return agents
	}
	return `SELECT ts AS m, CAST(in_bytes AS DOUBLE PRECISION) AS rx, CAST(out_bytes AS DOUBLE PRECISION) AS tx
		FROM traffic_minutes WHERE ts >= $1 AND ts < $2 UNION ALL ` + agents
}

// ReportTrafficMinutes returns the traffic of each minute of the scope
// that has any, oldest first: at most one row a minute (43 200 for 30
// days), whatever the number of agents.
func (db *DB) ReportTrafficMinutes(ctx context.Context, s ReportScope) ([]ReportMinute, error) {
	q := `SELECT t.m, SUM(t.rx), SUM(t.tx) FROM (` + reportTrafficSQL(s) + `) t GROUP BY t.m ORDER BY t.m`
	rows, err := db.reader.QueryContext(ctx, q, s.args()...)
	if err != nil {
		return nil, fmt.Errorf("report traffic minutes: %w", err)
	}
	defer rows.Close()
	var out []ReportMinute
	for rows.Next() {
		var m ReportMinute
		if err := rows.Scan(&m.TS, &m.RxByte, &m.TxByte); err != nil {
			return nil, fmt.Errorf("report traffic minutes: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ReportTrafficTotal sums the scope's traffic (the previous period of a
// report, for its change).
func (db *DB) ReportTrafficTotal(ctx context.Context, s ReportScope) (rx, tx float64, err error) {
	q := `SELECT COALESCE(SUM(t.rx), 0), COALESCE(SUM(t.tx), 0) FROM (` + reportTrafficSQL(s) + `) t`
	if err := db.reader.QueryRowContext(ctx, q, s.args()...).Scan(&rx, &tx); err != nil {
		return 0, 0, fmt.Errorf("report traffic total: %w", err)
	}
	return rx, tx, nil
}

// ReportRow is one group of a top-N read: its key columns and its sums,
// in the order the read documents.
type ReportRow struct {
	Keys []string
	Sums []int64
}

// ReportTop is a top-N read: the first rows and how many groups there
// were in all.
type ReportTop struct {
	Rows  []ReportRow
	Total int
}

// reportTop runs q, whose columns are nkeys text keys, then sums, then
// COUNT(*) OVER () last.
func (db *DB) reportTop(ctx context.Context, what string, nkeys, nsums int, q string, args ...any) (ReportTop, error) {
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return ReportTop{}, fmt.Errorf("report %s: %w", what, err)
	}
	defer rows.Close()
	out := ReportTop{Rows: []ReportRow{}}
	for rows.Next() {
		r := ReportRow{Keys: make([]string, nkeys), Sums: make([]int64, nsums)}
		dst := make([]any, 0, nkeys+nsums+1)
		for i := range r.Keys {
			dst = append(dst, &r.Keys[i])
		}
		for i := range r.Sums {
			dst = append(dst, &r.Sums[i])
		}
		dst = append(dst, &out.Total)
		if err := rows.Scan(dst...); err != nil {
			return ReportTop{}, fmt.Errorf("report %s: %w", what, err)
		}
		out.Rows = append(out.Rows, r)
	}
	return out, rows.Err()
}

// ReportProcesses is the deep collection's processes by bytes: keys
// process; sums bytes in, bytes out, agents. Busiest first, ties by name.
func (db *DB) ReportProcesses(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	q := `SELECT process, SUM(bytes_in), SUM(bytes_out), COUNT(DISTINCT agent_id), COUNT(*) OVER ()
		FROM agent_proc_minutes WHERE ts >= $1 AND ts < $2` + s.agentSite(3) + `
		GROUP BY process ORDER BY SUM(bytes_in) + SUM(bytes_out) DESC, process LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "processes", 1, 3, q, s.args()...)
}

// ReportDNS is the most queried DNS names: keys domain; sums queries,
// responses, agents. Most queried first, ties by name.
func (db *DB) ReportDNS(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	q := `SELECT domain, SUM(queries), SUM(responses), COUNT(DISTINCT agent_id), COUNT(*) OVER ()
		FROM agent_dns_minutes WHERE ts >= $1 AND ts < $2` + s.agentSite(3) + `
		GROUP BY domain ORDER BY SUM(queries) DESC, domain LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "dns", 1, 3, q, s.args()...)
}

// ReportApplications is the TLS SNI and HTTP Host names seen: keys host,
// kind; sums bytes, hits, agents. Most bytes first, ties by host, kind.
func (db *DB) ReportApplications(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	q := `SELECT host, kind, SUM(bytes), SUM(hits), COUNT(DISTINCT agent_id), COUNT(*) OVER ()
		FROM agent_l7_minutes WHERE ts >= $1 AND ts < $2` + s.agentSite(3) + `
		GROUP BY host, kind ORDER BY SUM(bytes) DESC, host, kind LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "applications", 2, 3, q, s.args()...)
}

// flowSite is siteClause for a scope (argument 3).
func (s ReportScope) flowSite() string { return siteClause(s.Site, 3) }

// The flow reads use the hourly rollup (flow_hours): the hours built when
// the report runs (the current hour is rolled up when it closes). Its
// remainder rows (src = '') keep every total exact; the conversations
// and destinations, which need addresses, leave them out.

// ReportProtocols is the flows by IP protocol: keys protocol number;
// sums octets, packets, flows. Most octets first, ties by number.
func (db *DB) ReportProtocols(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	q := `SELECT CAST(proto AS TEXT), SUM(octets), SUM(packets), SUM(flows), COUNT(*) OVER ()
		FROM flow_hours WHERE ts >= $1 AND ts < $2` + s.flowSite() + `
		GROUP BY proto ORDER BY SUM(octets) DESC, proto LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "protocols", 1, 3, q, s.args()...)
}

// ReportConversations is the top address pairs: keys src, dst; sums
// octets, packets, flows. Most octets first, ties by src, dst.
func (db *DB) ReportConversations(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	q := `SELECT src, dst, SUM(octets), SUM(packets), SUM(flows), COUNT(*) OVER ()
		FROM flow_hours WHERE ts >= $1 AND ts < $2 AND src <> ''` + s.flowSite() + `
		GROUP BY src, dst ORDER BY SUM(octets) DESC, src, dst LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "conversations", 2, 3, q, s.args()...)
}

// ReportDestinations is the top destination addresses: keys dst; sums
// octets, flows. Most octets first, ties by address. The builder maps
// them to countries and ASNs.
func (db *DB) ReportDestinations(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	q := `SELECT dst, SUM(octets), SUM(flows), COUNT(*) OVER ()
		FROM flow_hours WHERE ts >= $1 AND ts < $2 AND src <> ''` + s.flowSite() + `
		GROUP BY dst ORDER BY SUM(octets) DESC, dst LIMIT ` + fmt.Sprint(limit)
	return db.reportTop(ctx, "destinations", 1, 2, q, s.args()...)
}

// ReportFlowTotal sums the flows' octets in scope (remainder rows
// included).
func (db *DB) ReportFlowTotal(ctx context.Context, s ReportScope) (int64, error) {
	var n int64
	q := `SELECT COALESCE(SUM(octets), 0) FROM flow_hours WHERE ts >= $1 AND ts < $2` + s.flowSite()
	if err := db.reader.QueryRowContext(ctx, q, s.args()...).Scan(&n); err != nil {
		return 0, fmt.Errorf("report flow total: %w", err)
	}
	return n, nil
}
