package store

// Reads of the reports' builder (app/reports, spec 4.3 "Report content").
// Every read is bounded by a [From, To) window and aggregated in SQL
// (GROUP BY, LIMIT): a 90-day report never loads raw rows into Go. The
// whole UTC days of the window that are rolled up (report_rollup.go,
// migration 0023) are read from the rollup tables, the rest live. Each
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
	"strings"
)

// ReportScope is the window and site of a report read.
type ReportScope struct {
	// From and To bound the window, Unix seconds, To excluded.
	From, To int64
	// Site keeps one site's rows ("" = every site).
	Site string
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

// reportTrafficSQL is the minutes in scope: the rolled-up minutes of
// the plan's rolled days (report_traffic_rollup) and, for its live
// ranges, the hub capture's minutes (every-site scope only) and each
// agent's minute, its samples' mean rate times 60 s (as RateMinutes
// averages them). $1 is the site ("" = every site).
func reportTrafficSQL(s ReportScope, p reportPlan) string {
	live := rangeCond("ts", p.live)
	site := ""
	if s.Site != "" {
		site = ` AND agent_id IN (SELECT id FROM agents WHERE site = $1)`
	}
	q := `SELECT ts AS m, rx, tx FROM report_traffic_rollup WHERE scope = $1 AND ` + rangeCond("ts", p.rolled) + `
		UNION ALL SELECT ts - ts % 60 AS m, CAST(AVG(rx_bps) * 60 AS DOUBLE PRECISION) AS rx, CAST(AVG(tx_bps) * 60 AS DOUBLE PRECISION) AS tx
		FROM agent_samples WHERE ` + live + ` AND has_rate` + site + ` GROUP BY agent_id, ts - ts % 60`
	if s.Site != "" {
		return q
	}
	return q + ` UNION ALL SELECT ts AS m, CAST(in_bytes AS DOUBLE PRECISION) AS rx, CAST(out_bytes AS DOUBLE PRECISION) AS tx
		FROM traffic_minutes WHERE ` + live
}

// ReportTrafficMinutes returns the traffic of each minute of the scope
// that has any, oldest first: at most one row a minute (43 200 for 30
// days), whatever the number of agents. Rolled-up days are read from
// report_traffic_rollup.
func (db *DB) ReportTrafficMinutes(ctx context.Context, s ReportScope) ([]ReportMinute, error) {
	p, err := db.planReport(ctx, s.From, s.To)
	if err != nil {
		return nil, err
	}
	return db.reportMinutes(ctx, s, p)
}

// reportMinutes is ReportTrafficMinutes over a plan.
func (db *DB) reportMinutes(ctx context.Context, s ReportScope, p reportPlan) ([]ReportMinute, error) {
	q := `SELECT t.m, SUM(t.rx), SUM(t.tx) FROM (` + reportTrafficSQL(s, p) + `) t GROUP BY t.m ORDER BY t.m`
	rows, err := db.reader.QueryContext(ctx, q, s.Site)
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
	p, err := db.planReport(ctx, s.From, s.To)
	if err != nil {
		return 0, 0, err
	}
	q := `SELECT COALESCE(SUM(t.rx), 0), COALESCE(SUM(t.tx), 0) FROM (` + reportTrafficSQL(s, p) + `) t`
	if err := db.reader.QueryRowContext(ctx, q, s.Site).Scan(&rx, &tx); err != nil {
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
	// AtLeast is set when a rolled-up day of the window had more keys
	// than the rollup keeps (store.ReportRollupTopK): Total counts the
	// keys kept, a lower bound (the rows and sums stay exact as
	// migration 0023 states).
	AtLeast bool `json:",omitempty"`
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
	return db.reportDeep(ctx, "processes", deepProcs, s, limit)
}

// ReportDNS is the most queried DNS names: keys domain; sums queries,
// responses, agents. Most queried first, ties by name.
func (db *DB) ReportDNS(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	return db.reportDeep(ctx, "dns", deepDNS, s, limit)
}

// ReportApplications is the TLS SNI and HTTP Host names seen: keys host,
// kind; sums bytes, hits, agents. Most bytes first, ties by host, kind.
func (db *DB) ReportApplications(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	return db.reportDeep(ctx, "applications", deepL7, s, limit)
}

// The flow reads use the hourly rollup (flow_hours) for the live part
// of their window (the hours built when the report runs: the current
// hour is rolled up when it closes) and the daily report rollup
// (report_flow_rollup) for its rolled days. flow_hours' remainder rows
// (src = '') keep every total exact; the conversations and destinations,
// which need addresses, leave them out, and so the daily rollup's
// remainder rows (k1 = ''). $1 is the site ("" = every site).

// flowTopSQL is a flow top read: the rolled rows of kind (keys k1, k2 as
// rolled) and the live flow_hours rows (keys live, condition where),
// grouped by group, busiest first.
func flowTopSQL(s ReportScope, p reportPlan, kind, rolled, live, where, sums, group string, limit int) string {
	site := ` AND $1 = $1`
	if s.Site != "" {
		site = siteClause(s.Site, 1)
	}
	return `SELECT ` + group + `, ` + sums + `, COUNT(*) OVER () FROM (
		SELECT ` + rolled + `, octets, packets, flows FROM report_flow_rollup
			WHERE scope = $1 AND kind = '` + kind + `' AND k1 <> '' AND ` + rangeCond("ts", p.rolled) + `
		UNION ALL SELECT ` + live + `, octets, packets, flows FROM flow_hours WHERE ` + rangeCond("ts", p.live) + where + site + `
		) t GROUP BY ` + group + ` ORDER BY SUM(octets) DESC, ` + group + ` LIMIT ` + fmt.Sprint(limit)
}

// ReportProtocols is the flows by IP protocol: keys protocol number;
// sums octets, packets, flows. Most octets first, ties by number.
func (db *DB) ReportProtocols(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	p, err := db.planReport(ctx, s.From, s.To)
	if err != nil {
		return ReportTop{}, err
	}
	q := flowTopSQL(s, p, "p", "CAST(k1 AS INTEGER) AS proto", "proto", "", "SUM(octets), SUM(packets), SUM(flows)", "proto", limit)
	q = strings.Replace(q, "SELECT proto, SUM", "SELECT CAST(proto AS TEXT), SUM", 1)
	top, err := db.reportTop(ctx, "protocols", 1, 3, q, s.Site)
	if err != nil {
		return ReportTop{}, err
	}
	if err := db.markCut(ctx, &top, "report_flow_rollup", "p", s.Site, p); err != nil {
		return ReportTop{}, err
	}
	return top, nil
}

// ReportConversations is the top address pairs: keys src, dst; sums
// octets, packets, flows. Most octets first, ties by src, dst.
func (db *DB) ReportConversations(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	p, err := db.planReport(ctx, s.From, s.To)
	if err != nil {
		return ReportTop{}, err
	}
	q := flowTopSQL(s, p, "c", "k1 AS src, k2 AS dst", "src, dst", " AND src <> ''", "SUM(octets), SUM(packets), SUM(flows)", "src, dst", limit)
	top, err := db.reportTop(ctx, "conversations", 2, 3, q, s.Site)
	if err != nil {
		return ReportTop{}, err
	}
	if err := db.markCut(ctx, &top, "report_flow_rollup", "c", s.Site, p); err != nil {
		return ReportTop{}, err
	}
	return top, nil
}

// ReportDestinations is the top destination addresses: keys dst; sums
// octets, flows. Most octets first, ties by address. The builder maps
// them to countries and ASNs.
func (db *DB) ReportDestinations(ctx context.Context, s ReportScope, limit int) (ReportTop, error) {
	p, err := db.planReport(ctx, s.From, s.To)
	if err != nil {
		return ReportTop{}, err
	}
	q := flowTopSQL(s, p, "d", "k1 AS dst", "dst", " AND src <> ''", "SUM(octets), SUM(flows)", "dst", limit)
	top, err := db.reportTop(ctx, "destinations", 1, 2, q, s.Site)
	if err != nil {
		return ReportTop{}, err
	}
	if err := db.markCut(ctx, &top, "report_flow_rollup", "d", s.Site, p); err != nil {
		return ReportTop{}, err
	}
	return top, nil
}

// ReportFlowTotal sums the flows' octets in scope (remainder rows
// included).
func (db *DB) ReportFlowTotal(ctx context.Context, s ReportScope) (int64, error) {
	p, err := db.planReport(ctx, s.From, s.To)
	if err != nil {
		return 0, err
	}
	site := ` AND $1 = $1`
	if s.Site != "" {
		site = siteClause(s.Site, 1)
	}
	var n int64
	q := `SELECT COALESCE(SUM(o), 0) FROM (
		SELECT octets AS o FROM report_flow_rollup WHERE scope = $1 AND kind = 'p' AND ` + rangeCond("ts", p.rolled) + `
		UNION ALL SELECT octets FROM flow_hours WHERE ` + rangeCond("ts", p.live) + site + `) t`
	if err := db.reader.QueryRowContext(ctx, q, s.Site).Scan(&n); err != nil {
		return 0, fmt.Errorf("report flow total: %w", err)
	}
	return n, nil
}
