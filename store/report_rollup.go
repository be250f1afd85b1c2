package store

// Report rollups (migration 0023; the exactness rule is stated there):
// RollupReportDay pre-aggregates one closed UTC day of what the reports
// read, and the Report* reads take the rolled whole days of their window
// from the rollup tables and the rest live (reportPlan).

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// ReportRollupTopK is how many keys a day's flow top lists keep per scope
// and kind (conversations, destinations, protocols); the rest is summed
// into one remainder row. 1 000 keeps a 30-day report's reads at tens of
// thousands of rows and covers the report's 500 destination candidates.
const ReportRollupTopK = 1000

// ReportRollupGrace is how long after a UTC day ends it is closed for the
// rollup: the hourly flow rollup and late telemetry batches land first.
const ReportRollupGrace = 2 * 3600

// ReportRollupTables are the rollup tables, each with a ts column, for
// the retention loop (register them like SLATables).
var ReportRollupTables = []string{"report_rollup_days", "report_traffic_rollup", "report_flow_rollup", "report_agent_rollup", "report_deep_rollup", "report_deep_agents"}

const daySec = 86400

// floorDay is the UTC midnight at or before ts.
func floorDay(ts int64) int64 { return ts - ((ts%daySec)+daySec)%daySec }

// reportPlan splits a window into the UTC days rolled up (whole days of
// the window that have a report_rollup_days row) and the live rest.
type reportPlan struct {
	rolled, live [][2]int64
}

// livePlan reads the whole window live.
func livePlan(from, to int64) reportPlan {
	if from >= to {
		return reportPlan{}
	}
	return reportPlan{live: [][2]int64{{from, to}}}
}

// addRange appends [a, b) to rs, merging it with the last range when they
// touch.
func addRange(rs [][2]int64, a, b int64) [][2]int64 {
	if a >= b {
		return rs
	}
	if n := len(rs); n > 0 && rs[n-1][1] == a {
		rs[n-1][1] = b
		return rs
	}
	return append(rs, [2]int64{a, b})
}

// planReport reads which whole UTC days of [from, to) are rolled up.
func (db *DB) planReport(ctx context.Context, from, to int64) (reportPlan, error) {
	first := floorDay(from)
	if first < from {
		first += daySec
	}
	last := floorDay(to)
	if first >= last {
		return livePlan(from, to), nil
	}
	rows, err := db.reader.QueryContext(ctx, `SELECT ts FROM report_rollup_days WHERE ts >= $1 AND ts < $2 ORDER BY ts`, first, last)
	if err != nil {
		return reportPlan{}, fmt.Errorf("report rollup days: %w", err)
	}
	defer rows.Close()
	var p reportPlan
	cur := from
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			return reportPlan{}, fmt.Errorf("report rollup days: %w", err)
		}
		if d%daySec != 0 {
			continue
		}
		p.live = addRange(p.live, cur, d)
		p.rolled = addRange(p.rolled, d, d+daySec)
		cur = d + daySec
	}
	if err := rows.Err(); err != nil {
		return reportPlan{}, fmt.Errorf("report rollup days: %w", err)
	}
	p.live = addRange(p.live, cur, to)
	return p, nil
}

// markCut sets top.AtLeast when a rolled day of p kept a remainder row
// of table's kind in scope (keys were cut from it).
func (db *DB) markCut(ctx context.Context, top *ReportTop, table, kind, scope string, p reportPlan) error {
	if len(p.rolled) == 0 || len(top.Rows) == 0 {
		return nil
	}
	var n int
	q := `SELECT COUNT(*) FROM ` + table + ` WHERE scope = $1 AND kind = $2 AND k1 = '' AND ` + rangeCond("ts", p.rolled)
	if err := db.reader.QueryRowContext(ctx, q, scope, kind).Scan(&n); err != nil {
		return fmt.Errorf("report rollup remainder: %w", err)
	}
	top.AtLeast = n > 0
	return nil
}

// rangeCond is col in any of rs, as SQL (the bounds are integers the
// store computed, inlined).
func rangeCond(col string, rs [][2]int64) string {
	if len(rs) == 0 {
		return "1 = 0"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("(%s >= %d AND %s < %d)", col, r[0], col, r[1])
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// ReportRollupPending lists the closed UTC days (midnights) not rolled up
// yet that may hold data, newest first, at most limit: from the day of the
// oldest raw row to the last day that ended ReportRollupGrace before now.
func (db *DB) ReportRollupPending(ctx context.Context, now int64, limit int) ([]int64, error) {
	var oldest sql.NullInt64
	q := `SELECT MIN(m) FROM (SELECT MIN(ts) AS m FROM agent_samples UNION ALL SELECT MIN(ts) FROM traffic_minutes
		UNION ALL SELECT MIN(ts) FROM flow_hours) t`
	if err := db.reader.QueryRowContext(ctx, q).Scan(&oldest); err != nil {
		return nil, fmt.Errorf("report rollup pending: %w", err)
	}
	end := floorDay(now - ReportRollupGrace) // days before end are closed
	if !oldest.Valid || limit <= 0 {
		return nil, nil
	}
	start := floorDay(oldest.Int64)
	done := map[int64]bool{}
	rows, err := db.reader.QueryContext(ctx, `SELECT ts FROM report_rollup_days WHERE ts >= $1 AND ts < $2`, start, end)
	if err != nil {
		return nil, fmt.Errorf("report rollup pending: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			return nil, fmt.Errorf("report rollup pending: %w", err)
		}
		done[d] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("report rollup pending: %w", err)
	}
	var out []int64
	for d := end - daySec; d >= start && len(out) < limit; d -= daySec {
		if !done[d] {
			out = append(out, d)
		}
	}
	return out, nil
}

// rollupScopes are the scopes a day is rolled up for: every site (""),
// and each site of an agent or a device.
func (db *DB) rollupScopes(ctx context.Context) ([]string, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT site FROM agents WHERE site <> '' UNION SELECT site FROM devices WHERE site <> '' ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("report rollup sites: %w", err)
	}
	defer rows.Close()
	out := []string{""}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("report rollup sites: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// flowRollupRow is one row of report_flow_rollup.
type flowRollupRow struct {
	scope, kind, k1, k2    string
	octets, packets, flows int64
}

// flowKind is a flow top list rolled up: its kind, the key columns
// selected (two, the second ” when one), the grouping and the condition.
type flowKind struct{ kind, keys, group, where string }

// flowKinds are the flow top lists rolled up.
var flowKinds = []flowKind{
	{"c", "src, dst", "src, dst", " AND src <> ''"},
	{"d", "dst, ''", "dst", " AND src <> ''"},
	{"p", "CAST(proto AS TEXT), ''", "proto", ""},
}

// rollupFlows reads a day's flow groups of one scope and kind, busiest
// first, keeping the ReportRollupTopK busiest and a remainder row (k1 =
// ”) summing the rest.
func (db *DB) rollupFlows(ctx context.Context, day int64, scope string, k flowKind) ([]flowRollupRow, error) {
	var args []any
	site := ""
	if scope != "" {
		args, site = []any{scope}, siteClause(scope, 1)
	}
	kind := k.kind
	q := `SELECT ` + k.keys + `, SUM(octets), SUM(packets), SUM(flows) FROM flow_hours WHERE ` +
		rangeCond("ts", [][2]int64{{day, day + daySec}}) + k.where + site +
		` GROUP BY ` + k.group + ` ORDER BY SUM(octets) DESC, ` + k.group
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("report rollup flows %s: %w", kind, err)
	}
	defer rows.Close()
	var out []flowRollupRow
	rest := flowRollupRow{scope: scope, kind: kind}
	n := 0
	for rows.Next() {
		r := flowRollupRow{scope: scope, kind: kind}
		if err := rows.Scan(&r.k1, &r.k2, &r.octets, &r.packets, &r.flows); err != nil {
			return nil, fmt.Errorf("report rollup flows %s: %w", kind, err)
		}
		n++
		// The flow rollup's own remainder rows (src '') are kept in the
		// protocols' remainder-free groups; a key '' can only be ours.
		if n <= ReportRollupTopK && r.k1 != "" {
			out = append(out, r)
			continue
		}
		rest.octets += r.octets
		rest.packets += r.packets
		rest.flows += r.flows
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("report rollup flows %s: %w", kind, err)
	}
	if rest.octets != 0 || rest.packets != 0 || rest.flows != 0 {
		out = append(out, rest)
	}
	return out, nil
}

// insertRows inserts rows into table's cols, many rows a statement (a
// day is tens of thousands of rows: one round trip each would take
// seconds on PostgreSQL); a row present already is left as it is.
func insertRows(ctx context.Context, tx *sql.Tx, table, cols string, rows [][]any) error {
	const batch = 500
	for len(rows) > 0 {
		n := min(batch, len(rows))
		var b strings.Builder
		b.WriteString("INSERT INTO " + table + " (" + cols + ") VALUES ")
		args := make([]any, 0, n*len(rows[0]))
		for i, r := range rows[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(")
			for j, v := range r {
				if j > 0 {
					b.WriteString(", ")
				}
				args = append(args, v)
				fmt.Fprintf(&b, "$%d", len(args))
			}
			b.WriteString(")")
		}
		b.WriteString(" ON CONFLICT DO NOTHING")
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("insert %s: %w", table, err)
		}
		rows = rows[n:]
	}
	return nil
}

// RollupReportDay rolls up the UTC day starting at day (a midnight): it
// reads the day live, as the reports would, and writes its rows with the
// report_rollup_days row in one transaction. It returns false when the
// day was rolled up already (by this hub or another sharing the
// database): a day is never rolled twice.
func (db *DB) RollupReportDay(ctx context.Context, day int64, now int64) (bool, error) {
	if day%daySec != 0 {
		return false, fmt.Errorf("report rollup: %d is not a UTC midnight", day)
	}
	var done int
	if err := db.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM report_rollup_days WHERE ts = $1`, day).Scan(&done); err != nil {
		return false, fmt.Errorf("report rollup: %w", err)
	}
	if done > 0 {
		return false, nil
	}
	scopes, err := db.rollupScopes(ctx)
	if err != nil {
		return false, err
	}
	plan := livePlan(day, day+daySec)
	type minuteRow struct {
		scope string
		m     ReportMinute
	}
	var minutes []minuteRow
	var flows []flowRollupRow
	for _, sc := range scopes {
		ms, err := db.reportMinutes(ctx, ReportScope{From: day, To: day + daySec, Site: sc}, plan)
		if err != nil {
			return false, err
		}
		for _, m := range ms {
			minutes = append(minutes, minuteRow{sc, m})
		}
		for _, k := range flowKinds {
			rs, err := db.rollupFlows(ctx, day, sc, k)
			if err != nil {
				return false, err
			}
			flows = append(flows, rs...)
		}
	}
	deepSums, deepAgents, err := db.rollupDeepDay(ctx, day, scopes)
	if err != nil {
		return false, err
	}
	type agentRow struct{ id, n int64 }
	var agents []agentRow
	rows, err := db.reader.QueryContext(ctx, `SELECT agent_id, COUNT(DISTINCT ts - ts % 60) FROM agent_samples
		WHERE ts >= $1 AND ts < $2 GROUP BY agent_id`, day, day+daySec)
	if err != nil {
		return false, fmt.Errorf("report rollup agents: %w", err)
	}
	for rows.Next() {
		var a agentRow
		if err := rows.Scan(&a.id, &a.n); err != nil {
			rows.Close()
			return false, fmt.Errorf("report rollup agents: %w", err)
		}
		agents = append(agents, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("report rollup agents: %w", err)
	}

	wrote := false
	err = db.InTx(ctx, func(t *Tx) error {
		res, err := t.tx.ExecContext(ctx, `INSERT INTO report_rollup_days (ts, done_at) VALUES ($1, $2) ON CONFLICT (ts) DO NOTHING`, day, now)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err // rolled up meanwhile: nothing to write
		}
		wrote = true
		tr := make([][]any, len(minutes))
		for i, r := range minutes {
			tr[i] = []any{r.scope, r.m.TS, r.m.RxByte, r.m.TxByte}
		}
		if err := insertRows(ctx, t.tx, "report_traffic_rollup", "scope, ts, rx, tx", tr); err != nil {
			return err
		}
		fr := make([][]any, len(flows))
		for i, r := range flows {
			fr[i] = []any{day, r.scope, r.kind, r.k1, r.k2, r.octets, r.packets, r.flows}
		}
		if err := insertRows(ctx, t.tx, "report_flow_rollup", "ts, scope, kind, k1, k2, octets, packets, flows", fr); err != nil {
			return err
		}
		ar := make([][]any, len(agents))
		for i, a := range agents {
			ar[i] = []any{day, a.id, a.n}
		}
		if err := insertRows(ctx, t.tx, "report_agent_rollup", "ts, agent_id, minutes", ar); err != nil {
			return err
		}
		return writeDeepRollup(ctx, t, day, deepSums, deepAgents)
	})
	if err != nil {
		return false, fmt.Errorf("report rollup %d: %w", day, err)
	}
	return wrote, nil
}
