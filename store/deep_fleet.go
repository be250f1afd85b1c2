package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// fleetList is a fleet-wide deep collection list and its rollup tables.
// Reading every agent's minute rows does not scale (10 000 agents with 50
// processes are 30 million rows an hour), so each list keeps beside them
// per-minute sums by site and key (a few hundred to a few thousand rows a
// minute) and, per agent and key, the last minute the agent reported the
// key: since a window always ends now, an agent reported a key within it
// exactly when that last minute is at or after its start, and agent_count
// is a count of those rows, taken for the listed keys only.
type fleetList struct {
	// site and last are the tables; agent the per-agent minute table
	// whose columns they share.
	site, last, agent string
	keys              []string
	sums              [2]string
	// order ranks the candidates (before the keys, ascending).
	order string
}

var (
	procList = fleetList{site: "proc_site_minutes", last: "agent_proc_last", agent: "agent_proc_minutes",
		keys: []string{"process"}, sums: [2]string{"bytes_in", "bytes_out"}, order: "SUM(bytes_in) + SUM(bytes_out) DESC"}
	l7List = fleetList{site: "l7_site_minutes", last: "agent_l7_last", agent: "agent_l7_minutes",
		keys: []string{"host", "kind", "process"}, sums: [2]string{"bytes", "hits"}, order: "SUM(bytes) DESC, SUM(hits) DESC"}
	dnsList = fleetList{site: "dns_site_minutes", last: "agent_dns_last", agent: "agent_dns_minutes",
		keys: []string{"domain", "process"}, sums: [2]string{"queries", "responses"}, order: "SUM(queries) DESC, SUM(responses) DESC"}
)

// fleetKey is a list's key (unused trailing parts empty).
type fleetKey [3]string

type siteKey struct {
	ts   int64
	site string
	k    fleetKey
}

type lastKey struct {
	agent int64
	site  string
	k     fleetKey
}

// rollup gathers one list's rollup rows of a chunk of batches.
type rollup struct {
	site map[siteKey][2]int64
	last map[lastKey][2]int64 // [0]: the last minute
}

func newRollup() rollup {
	return rollup{site: map[siteKey][2]int64{}, last: map[lastKey][2]int64{}}
}

func (r rollup) add(agent, ts int64, site string, k fleetKey, a, b uint64) {
	sk := siteKey{ts, site, k}
	r.site[sk] = add2(r.site[sk], a, b)
	lk := lastKey{agent, site, k}
	r.last[lk] = [2]int64{max(r.last[lk][0], ts)}
}

func compareKeys(a, b fleetKey) int {
	return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2]))
}

// write upserts the rollup rows of list l.
func (r rollup) write(ctx context.Context, tx *sql.Tx, d Dialect, l fleetList) error {
	n := len(l.keys)
	keys := strings.Join(l.keys, ", ")
	types := []string{"BIGINT", "TEXT"}
	for range n {
		types = append(types, "TEXT")
	}
	err := upsertSums(ctx, tx, d, r.site, func(a, b siteKey) int {
		return cmp.Or(cmp.Compare(a.ts, b.ts), cmp.Compare(a.site, b.site), compareKeys(a.k, b.k))
	}, fmt.Sprintf("%s (ts, site, %s, %s, %s)", l.site, keys, l.sums[0], l.sums[1]), "ts, site, "+keys,
		fmt.Sprintf("%[2]s = %[1]s.%[2]s + excluded.%[2]s, %[3]s = %[1]s.%[3]s + excluded.%[3]s", l.site, l.sums[0], l.sums[1]),
		append(types, "BIGINT", "BIGINT"),
		func(k siteKey, v [2]int64, args []any) []any {
			args = append(args, k.ts, k.site)
			for i := range n {
				args = append(args, k.k[i])
			}
			return append(args, v[0], v[1])
		})
	if err != nil {
		return err
	}
	return upsertSums(ctx, tx, d, r.last, func(a, b lastKey) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), compareKeys(a.k, b.k))
	}, fmt.Sprintf("%s (agent_id, site, %s, ts)", l.last, keys), "agent_id, "+keys,
		fmt.Sprintf("ts = CASE WHEN excluded.ts > %[1]s.ts THEN excluded.ts ELSE %[1]s.ts END", l.last),
		append(types, "BIGINT"),
		func(k lastKey, v [2]int64, args []any) []any {
			args = append(args, k.agent, k.site)
			for i := range n {
				args = append(args, k.k[i])
			}
			return append(args, v[0])
		})
}

// fleetRow is a row of a fleet-wide list.
type fleetRow struct {
	k      fleetKey
	sums   [2]int64
	agents int64
}

// fleetTop is list l over the window from (a minute start) of site ("" =
// all), best first, at most limit: keys whose every agent was deleted
// (zero sums until retention) are skipped.
func (db *DB) fleetTop(ctx context.Context, l fleetList, from int64, site string, limit int) ([]fleetRow, error) {
	keys := strings.Join(l.keys, ", ")
	out := []fleetRow{}
	for offset, batch := 0, limit+8; len(out) < limit; offset, batch = offset+batch, batch*2 {
		q := fmt.Sprintf(`SELECT %s, SUM(%s), SUM(%s) FROM %s WHERE ts >= $1`, keys, l.sums[0], l.sums[1], l.site)
		args := []any{from}
		if site != "" {
			args = append(args, site)
			q += ` AND site = $2`
		}
		args = append(args, batch, offset)
		q += fmt.Sprintf(` GROUP BY %s ORDER BY %s, %s LIMIT $%d OFFSET $%d`, keys, l.order, keys, len(args)-1, len(args))
		cands, err := db.fleetCandidates(ctx, len(l.keys), q, args)
		if err != nil {
			return nil, fmt.Errorf("top %s: %w", l.site, err)
		}
		if err := db.countAgents(ctx, l, cands, from, site); err != nil {
			return nil, fmt.Errorf("top %s: %w", l.site, err)
		}
		for _, c := range cands {
			if c.agents > 0 && len(out) < limit {
				out = append(out, c)
			}
		}
		if len(cands) < batch {
			break
		}
	}
	return out, nil
}

func (db *DB) fleetCandidates(ctx context.Context, nkeys int, q string, args []any) ([]fleetRow, error) {
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []fleetRow
	for rows.Next() {
		var r fleetRow
		dest := make([]any, 0, nkeys+2)
		for i := range nkeys {
			dest = append(dest, &r.k[i])
		}
		if err := rows.Scan(append(dest, &r.sums[0], &r.sums[1])...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// countAgents sets the agent count of each of rs: the agents (of site,
// when set) whose last report of the key is at or after from.
func (db *DB) countAgents(ctx context.Context, l fleetList, rs []fleetRow, from int64, site string) error {
	if len(rs) == 0 {
		return nil
	}
	keys := strings.Join(l.keys, ", ")
	args := []any{from}
	q := fmt.Sprintf(`SELECT %s, COUNT(*) FROM %s WHERE ts >= $1`, keys, l.last)
	if site != "" {
		args = append(args, site)
		q += ` AND site = $2`
	}
	q += ` AND (` + keys + `) IN (`
	idx := make(map[fleetKey]int, len(rs))
	for i, r := range rs {
		if i > 0 {
			q += ","
		}
		q += "("
		for j := range l.keys {
			if j > 0 {
				q += ","
			}
			args = append(args, r.k[j])
			q += fmt.Sprintf("$%d", len(args))
		}
		q += ")"
		idx[r.k] = i
	}
	rows, err := db.reader.QueryContext(ctx, q+`) GROUP BY `+keys, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k fleetKey
		var n int64
		dest := make([]any, 0, len(l.keys)+1)
		for i := range l.keys {
			dest = append(dest, &k[i])
		}
		if err := rows.Scan(append(dest, &n)...); err != nil {
			return err
		}
		if i, ok := idx[k]; ok {
			rs[i].agents = n
		}
	}
	return rows.Err()
}

// deleteDeepRows takes agent id's traffic out of the fleet-wide sums
// before its rows go (by the foreign keys' cascade), so that the lists
// forget a deleted agent like every other list.
func (t *Tx) deleteDeepRows(ctx context.Context, id int64) error {
	for _, l := range []fleetList{procList, l7List, dnsList} {
		var match []string
		for _, k := range append([]string{"ts", "site"}, l.keys...) {
			match = append(match, fmt.Sprintf("%[1]s.%[2]s = s.%[2]s", l.site, k))
		}
		keys := strings.Join(l.keys, ", m.")
		q := fmt.Sprintf(`UPDATE %[1]s SET %[2]s = %[1]s.%[2]s - s.%[2]s, %[3]s = %[1]s.%[3]s - s.%[3]s
			FROM (SELECT m.ts, a.site, m.%[4]s, SUM(m.%[2]s) AS %[2]s, SUM(m.%[3]s) AS %[3]s
				FROM %[5]s m JOIN agents a ON a.id = m.agent_id WHERE m.agent_id = $1 GROUP BY m.ts, a.site, m.%[4]s) AS s
			WHERE %[6]s`, l.site, l.sums[0], l.sums[1], keys, l.agent, strings.Join(match, " AND "))
		if _, err := t.tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("subtract from %s: %w", l.site, err)
		}
	}
	return nil
}
