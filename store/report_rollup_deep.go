package store

// The deep collection's report reads over the report rollups (migration
// 0023): the sums of a key from report_deep_rollup for the rolled days
// and live for the rest, then the distinct agents of the listed keys
// only (report_deep_agents for the rolled days).

import (
	"context"
	"fmt"
	"strings"
)

// deepKind is a deep top list: its rollup kind, raw table, the raw
// columns as k1, k2, s1, s2, and its order on the sums.
type deepKind struct {
	kind, table, cols, order string
	nkeys                    int
}

var (
	deepProcs = deepKind{"proc", "agent_proc_minutes", "process AS k1, '' AS k2, bytes_in AS s1, bytes_out AS s2", "SUM(s1) + SUM(s2) DESC, k1", 1}
	deepDNS   = deepKind{"dns", "agent_dns_minutes", "domain AS k1, '' AS k2, queries AS s1, responses AS s2", "SUM(s1) DESC, k1", 1}
	deepL7    = deepKind{"l7", "agent_l7_minutes", "host AS k1, kind AS k2, bytes AS s1, hits AS s2", "SUM(s1) DESC, k1, k2", 2}
	deepKinds = []deepKind{deepProcs, deepDNS, deepL7}
)

// agentSiteOf keeps the agents of site, argument 1 ("" without a site).
func agentSiteOf(site string) string {
	if site == "" {
		return ""
	}
	return ` AND agent_id IN (SELECT id FROM agents WHERE site = $1)`
}

// reportDeep is a deep top read: keys k1 (and k2 for two keys); sums s1,
// s2, agents.
func (db *DB) reportDeep(ctx context.Context, what string, k deepKind, s ReportScope, limit int) (ReportTop, error) {
	p, err := db.planReport(ctx, s.From, s.To)
	if err != nil {
		return ReportTop{}, err
	}
	live := rangeCond("ts", p.live)
	q := `SELECT k1, k2, SUM(s1), SUM(s2), COUNT(*) OVER () FROM (
		SELECT k1, k2, s1, s2 FROM report_deep_rollup WHERE scope = $1 AND kind = '` + k.kind + `' AND k1 <> '' AND ` + rangeCond("ts", p.rolled) + `
		UNION ALL SELECT ` + k.cols + ` FROM ` + k.table + ` WHERE ` + live + agentSiteOf(s.Site) + `
		) t GROUP BY k1, k2 ORDER BY ` + k.order + ` LIMIT ` + fmt.Sprint(limit)
	top, err := db.reportTop(ctx, what, 2, 2, q, s.Site)
	if err != nil || len(top.Rows) == 0 {
		return top, err
	}
	if err := db.markCut(ctx, &top, "report_deep_rollup", k.kind, s.Site, p); err != nil {
		return ReportTop{}, err
	}
	// The distinct agents of the listed keys: k1 IN (...) and k2 IN
	// (...) lets the index find them (a superset of the pairs, each
	// counted apart: only the listed pairs are read back).
	args := []any{s.Site}
	var k1s, k2s []string
	seen2 := map[string]bool{}
	for _, r := range top.Rows {
		args = append(args, r.Keys[0])
		k1s = append(k1s, fmt.Sprintf("$%d", len(args)))
	}
	for _, r := range top.Rows {
		if !seen2[r.Keys[1]] {
			seen2[r.Keys[1]] = true
			args = append(args, r.Keys[1])
			k2s = append(k2s, fmt.Sprintf("$%d", len(args)))
		}
	}
	in := "k1 IN (" + strings.Join(k1s, ", ") + ") AND k2 IN (" + strings.Join(k2s, ", ") + ")"
	site := agentSiteOf(s.Site)
	if site == "" {
		site = ` AND CAST($1 AS TEXT) = CAST($1 AS TEXT)`
	}
	q = `SELECT k1, k2, COUNT(DISTINCT agent_id) FROM (
		SELECT k1, k2, agent_id FROM report_deep_agents WHERE kind = '` + k.kind + `' AND ` + in + ` AND ` + rangeCond("ts", p.rolled) + site + `
		UNION ALL SELECT k1, k2, agent_id FROM (SELECT ` + k.cols + `, agent_id FROM ` + k.table + ` WHERE ` + live + agentSiteOf(s.Site) + `) r WHERE ` + in + `
		) t GROUP BY k1, k2`
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return ReportTop{}, fmt.Errorf("report %s agents: %w", what, err)
	}
	defer rows.Close()
	agents := map[[2]string]int64{}
	for rows.Next() {
		var k [2]string
		var n int64
		if err := rows.Scan(&k[0], &k[1], &n); err != nil {
			return ReportTop{}, fmt.Errorf("report %s agents: %w", what, err)
		}
		agents[k] = n
	}
	if err := rows.Err(); err != nil {
		return ReportTop{}, fmt.Errorf("report %s agents: %w", what, err)
	}
	for i, r := range top.Rows {
		top.Rows[i].Sums = append(r.Sums, agents[[2]string{r.Keys[0], r.Keys[1]}])
		top.Rows[i].Keys = r.Keys[:k.nkeys]
	}
	return top, nil
}

// deepRollupRow is one row of report_deep_rollup.
type deepRollupRow struct {
	scope, kind, k1, k2 string
	s1, s2              int64
}

// rollupDeep reads a day's groups of a deep kind in scope, keeping the
// ReportRollupTopK first and a remainder row (k1 = ”) for the rest.
func (db *DB) rollupDeep(ctx context.Context, day int64, scope string, k deepKind) ([]deepRollupRow, error) {
	q := `SELECT k1, k2, SUM(s1), SUM(s2) FROM (SELECT ` + k.cols + ` FROM ` + k.table + ` WHERE ` +
		rangeCond("ts", [][2]int64{{day, day + daySec}}) + agentSiteOf(scope) + `) t GROUP BY k1, k2 ORDER BY ` + k.order
	var args []any
	if scope != "" {
		args = []any{scope}
	}
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("report rollup %s: %w", k.kind, err)
	}
	defer rows.Close()
	var out []deepRollupRow
	rest := deepRollupRow{scope: scope, kind: k.kind}
	for rows.Next() {
		r := deepRollupRow{scope: scope, kind: k.kind}
		if err := rows.Scan(&r.k1, &r.k2, &r.s1, &r.s2); err != nil {
			return nil, fmt.Errorf("report rollup %s: %w", k.kind, err)
		}
		if len(out) < ReportRollupTopK && r.k1 != "" {
			out = append(out, r)
			continue
		}
		rest.s1 += r.s1
		rest.s2 += r.s2
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("report rollup %s: %w", k.kind, err)
	}
	if rest.s1 != 0 || rest.s2 != 0 {
		out = append(out, rest)
	}
	return out, nil
}

// deepAgentRow is one row of report_deep_agents.
type deepAgentRow struct {
	kind, k1, k2 string
	agent        int64
}

// rollupDeepAgents reads a day's distinct (key, agent) of a deep kind,
// for the keys kept in some scope (kept).
func (db *DB) rollupDeepAgents(ctx context.Context, day int64, k deepKind, kept map[[2]string]bool) ([]deepAgentRow, error) {
	q := `SELECT DISTINCT k1, k2, agent_id FROM (SELECT ` + k.cols + `, agent_id FROM ` + k.table + ` WHERE ` +
		rangeCond("ts", [][2]int64{{day, day + daySec}}) + `) t`
	rows, err := db.reader.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("report rollup %s agents: %w", k.kind, err)
	}
	defer rows.Close()
	var out []deepAgentRow
	for rows.Next() {
		r := deepAgentRow{kind: k.kind}
		if err := rows.Scan(&r.k1, &r.k2, &r.agent); err != nil {
			return nil, fmt.Errorf("report rollup %s agents: %w", k.kind, err)
		}
		if kept[[2]string{r.k1, r.k2}] {
			out = append(out, r)
		}
	}
	return out, rows.Err()
}

// rollupDeepDay reads a day's deep rollup rows of every scope.
func (db *DB) rollupDeepDay(ctx context.Context, day int64, scopes []string) ([]deepRollupRow, []deepAgentRow, error) {
	var sums []deepRollupRow
	var agents []deepAgentRow
	for _, k := range deepKinds {
		kept := map[[2]string]bool{}
		for _, sc := range scopes {
			rs, err := db.rollupDeep(ctx, day, sc, k)
			if err != nil {
				return nil, nil, err
			}
			for _, r := range rs {
				kept[[2]string{r.k1, r.k2}] = r.k1 != ""
			}
			sums = append(sums, rs...)
		}
		as, err := db.rollupDeepAgents(ctx, day, k, kept)
		if err != nil {
			return nil, nil, err
		}
		agents = append(agents, as...)
	}
	return sums, agents, nil
}

// writeDeepRollup inserts a day's deep rollup rows in t.
func writeDeepRollup(ctx context.Context, t *Tx, day int64, sums []deepRollupRow, agents []deepAgentRow) error {
	sr := make([][]any, len(sums))
	for i, r := range sums {
		sr[i] = []any{day, r.scope, r.kind, r.k1, r.k2, r.s1, r.s2}
	}
	if err := insertRows(ctx, t.tx, "report_deep_rollup", "ts, scope, kind, k1, k2, s1, s2", sr); err != nil {
		return err
	}
	ar := make([][]any, len(agents))
	for i, r := range agents {
		ar[i] = []any{day, r.kind, r.k1, r.k2, r.agent}
	}
	return insertRows(ctx, t.tx, "report_deep_agents", "ts, kind, k1, k2, agent_id", ar)
}
