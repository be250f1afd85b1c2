package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"netmon/store/record"
)

// DeepTables are the deep collection tables (issue 17), for the retention
// loop: each has a ts column, the minute's start.
var DeepTables = []string{"agent_deep_seqs", "agent_proc_minutes", "proc_site_minutes", "agent_proc_last", "agent_unattributed_minutes",
	"agent_remote_minutes", "agent_l7_minutes", "l7_site_minutes", "agent_l7_last", "agent_dns_minutes", "dns_site_minutes", "agent_dns_last"}

// deepChunk is how many batches one chunk of WriteDeep sums together (a
// batch carries up to a few hundred rows).
const deepChunk = 64

// WriteDeep adds deep collection batches to the per-agent, per-minute
// aggregates as bulk ingest (see DB.ingest). Each batch adds once: its
// (agent, seq) is claimed in agent_deep_seqs in the same transaction, and
// a batch whose seq is claimed already (a replay) adds nothing. Batches of
// agents deleted meanwhile are dropped silently. It returns how many of ds
// are committed, also on error: retry only the rest.
func (db *DB) WriteDeep(ctx context.Context, ds []record.Deep) (int, error) {
	n, err := db.ingest(ctx, len(ds), deepChunk, func(tx *sql.Tx, from, to int) error {
		return db.writeDeep(ctx, tx, ds[from:to])
	})
	if err != nil {
		return n, fmt.Errorf("write deep collection: %w", err)
	}
	return n, nil
}

type procKey struct {
	agent, ts int64
	process   string
	pid       int32
}

type reasonKey struct {
	agent, ts int64
	reason    string
}

type l7Key struct {
	agent, ts           int64
	host, kind, process string
}

type dnsKey struct {
	agent, ts       int64
	domain, process string
}

type remoteKey struct {
	agent, ts              int64
	process, proto, remote string
	port                   uint16
}

func (db *DB) writeDeep(ctx context.Context, tx *sql.Tx, ds []record.Deep) error {
	procs := map[procKey][2]int64{}
	l7 := map[l7Key][2]int64{}
	dns := map[dnsKey][2]int64{}
	remotes := map[remoteKey][2]int64{}
	reasons := map[reasonKey][2]int64{}
	fresh := make([]bool, len(ds))
	var agents []int64
	for i := range ds {
		var err error
		if fresh[i], err = claimDeep(ctx, tx, &ds[i]); err != nil {
			return err
		}
		if fresh[i] {
			agents = append(agents, ds[i].AgentID)
		}
	}
	sites, err := agentSites(ctx, tx, agents)
	if err != nil {
		return err
	}
	procFleet, l7Fleet, dnsFleet := newRollup(), newRollup(), newRollup()
	for i := range ds {
		d := &ds[i]
		if !fresh[i] {
			continue
		}
		m := d.TS - d.TS%60
		site := sites[d.AgentID]
		for _, p := range d.Processes {
			name := cleanText(p.Process)
			k := procKey{d.AgentID, m, name, p.PID}
			procs[k] = add2(procs[k], p.BytesIn, p.BytesOut)
			procFleet.add(d.AgentID, m, site, fleetKey{name}, p.BytesIn, p.BytesOut)
		}
		for _, h := range d.L7 {
			k := l7Key{d.AgentID, m, cleanText(h.Host), cleanText(h.Kind), cleanText(h.Process)}
			l7[k] = add2(l7[k], h.Bytes, h.Hits)
			l7Fleet.add(d.AgentID, m, site, fleetKey{k.host, k.kind, k.process}, h.Bytes, h.Hits)
		}
		for _, q := range d.DNS {
			k := dnsKey{d.AgentID, m, cleanText(q.Domain), cleanText(q.Process)}
			dns[k] = add2(dns[k], q.Queries, q.Responses)
			dnsFleet.add(d.AgentID, m, site, fleetKey{k.domain, k.process}, q.Queries, q.Responses)
		}
		for _, r := range d.Remotes {
			k := remoteKey{d.AgentID, m, cleanText(r.Process), cleanText(r.Proto), cleanText(r.IP), r.Port}
			remotes[k] = add2(remotes[k], r.BytesIn, r.BytesOut)
		}
		for _, r := range d.Unattributed {
			k := reasonKey{d.AgentID, m, cleanText(r.Reason)}
			reasons[k] = add2(reasons[k], r.Bytes, r.Packets)
		}
	}
	// Rows go in key order, the same in every writer, so that two
	// PostgreSQL writers upserting the same rows cannot deadlock.
	for _, f := range []struct {
		r rollup
		l fleetList
	}{{procFleet, procList}, {l7Fleet, l7List}, {dnsFleet, dnsList}} {
		if err := f.r.write(ctx, tx, db.dialect, f.l); err != nil {
			return err
		}
	}
	err = upsertSums(ctx, tx, db.dialect, procs, func(a, b procKey) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.ts, b.ts), cmp.Compare(a.process, b.process), cmp.Compare(a.pid, b.pid))
	}, `agent_proc_minutes (agent_id, ts, process, pid, bytes_in, bytes_out)`, `agent_id, ts, process, pid`,
		`bytes_in = agent_proc_minutes.bytes_in + excluded.bytes_in, bytes_out = agent_proc_minutes.bytes_out + excluded.bytes_out`,
		[]string{"BIGINT", "BIGINT", "TEXT", "INTEGER", "BIGINT", "BIGINT"},
		func(k procKey, v [2]int64, args []any) []any {
			return append(args, k.agent, k.ts, k.process, k.pid, v[0], v[1])
		})
	if err != nil {
		return err
	}
	err = upsertSums(ctx, tx, db.dialect, reasons, func(a, b reasonKey) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.ts, b.ts), cmp.Compare(a.reason, b.reason))
	}, `agent_unattributed_minutes (agent_id, ts, reason, bytes, packets)`, `agent_id, ts, reason`,
		`bytes = agent_unattributed_minutes.bytes + excluded.bytes, packets = agent_unattributed_minutes.packets + excluded.packets`,
		[]string{"BIGINT", "BIGINT", "TEXT", "BIGINT", "BIGINT"},
		func(k reasonKey, v [2]int64, args []any) []any {
			return append(args, k.agent, k.ts, k.reason, v[0], v[1])
		})
	if err != nil {
		return err
	}
	err = upsertSums(ctx, tx, db.dialect, remotes, func(a, b remoteKey) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.ts, b.ts), cmp.Compare(a.process, b.process), cmp.Compare(a.proto, b.proto),
			cmp.Compare(a.remote, b.remote), cmp.Compare(a.port, b.port))
	}, `agent_remote_minutes (agent_id, ts, process, proto, remote_ip, remote_port, bytes_in, bytes_out)`, `agent_id, ts, process, proto, remote_ip, remote_port`,
		`bytes_in = agent_remote_minutes.bytes_in + excluded.bytes_in, bytes_out = agent_remote_minutes.bytes_out + excluded.bytes_out`,
		[]string{"BIGINT", "BIGINT", "TEXT", "TEXT", "TEXT", "INTEGER", "BIGINT", "BIGINT"},
		func(k remoteKey, v [2]int64, args []any) []any {
			return append(args, k.agent, k.ts, k.process, k.proto, k.remote, int(k.port), v[0], v[1])
		})
	if err != nil {
		return err
	}
	err = upsertSums(ctx, tx, db.dialect, l7, func(a, b l7Key) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.ts, b.ts), cmp.Compare(a.host, b.host), cmp.Compare(a.kind, b.kind), cmp.Compare(a.process, b.process))
	}, `agent_l7_minutes (agent_id, ts, host, kind, process, bytes, hits)`, `agent_id, ts, host, kind, process`,
		`bytes = agent_l7_minutes.bytes + excluded.bytes, hits = agent_l7_minutes.hits + excluded.hits`,
		[]string{"BIGINT", "BIGINT", "TEXT", "TEXT", "TEXT", "BIGINT", "BIGINT"},
		func(k l7Key, v [2]int64, args []any) []any {
			return append(args, k.agent, k.ts, k.host, k.kind, k.process, v[0], v[1])
		})
	if err != nil {
		return err
	}
	return upsertSums(ctx, tx, db.dialect, dns, func(a, b dnsKey) int {
		return cmp.Or(cmp.Compare(a.agent, b.agent), cmp.Compare(a.ts, b.ts), cmp.Compare(a.domain, b.domain), cmp.Compare(a.process, b.process))
	}, `agent_dns_minutes (agent_id, ts, domain, process, queries, responses)`, `agent_id, ts, domain, process`,
		`queries = agent_dns_minutes.queries + excluded.queries, responses = agent_dns_minutes.responses + excluded.responses`,
		[]string{"BIGINT", "BIGINT", "TEXT", "TEXT", "BIGINT", "BIGINT"},
		func(k dnsKey, v [2]int64, args []any) []any {
			return append(args, k.agent, k.ts, k.domain, k.process, v[0], v[1])
		})
}

// agentSites returns the site of each of ids (deleted agents left out).
func agentSites(ctx context.Context, tx *sql.Tx, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	q := `SELECT id, site FROM agents WHERE id IN (`
	args := make([]any, len(ids))
	for i, id := range ids {
		if i > 0 {
			q += ","
		}
		q += fmt.Sprintf("$%d", i+1)
		args[i] = id
	}
	rows, err := tx.QueryContext(ctx, q+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var site string
		if err := rows.Scan(&id, &site); err != nil {
			return nil, err
		}
		out[id] = site
	}
	return out, rows.Err()
}

// claimDeep records batch d's (agent, seq); fresh is false when it was
// recorded before (a replay) or the agent is gone.
func claimDeep(ctx context.Context, tx *sql.Tx, d *record.Deep) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, `INSERT INTO agent_deep_seqs (agent_id, seq, ts)
		SELECT CAST($1 AS BIGINT), CAST($2 AS BIGINT), CAST($3 AS BIGINT)
		WHERE EXISTS (SELECT 1 FROM agents WHERE id = CAST($1 AS BIGINT))
		ON CONFLICT (agent_id, seq) DO NOTHING RETURNING 1`, d.AgentID, int64(d.Seq), d.TS).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// maxCounter bounds a summed counter below int64's range: the intake
// bounds each value far lower, this only keeps a sum of many from
// wrapping into a negative number.
const maxCounter = 1 << 62

func add2(v [2]int64, a, b uint64) [2]int64 {
	v[0] = min(v[0]+int64(min(a, maxCounter)), maxCounter)
	v[1] = min(v[1]+int64(min(b, maxCounter)), maxCounter)
	return v
}

// upsertSums adds rows (key -> two sums) to table in key order: "INSERT
// INTO into SELECT ... ON CONFLICT (conflict) DO UPDATE SET set".
func upsertSums[K comparable](ctx context.Context, tx *sql.Tx, d Dialect, rows map[K][2]int64, order func(a, b K) int,
	into, conflict, set string, types []string, argsOf func(k K, v [2]int64, args []any) []any) error {
	if len(rows) == 0 {
		return nil
	}
	keys := make([]K, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, order)
	cols := ""
	for i := range types {
		if i > 0 {
			cols += ", "
		}
		cols += fmt.Sprintf("v.column%d", i+1)
	}
	return execValues(ctx, tx, len(keys), func(n int) string {
		// "WHERE true" tells SQLite's parser that ON CONFLICT is the
		// upsert clause, not a join's ON.
		return `INSERT INTO ` + into + ` SELECT ` + cols + ` FROM (VALUES ` + valuesList(d, n, types) + `) AS v WHERE true
			ON CONFLICT (` + conflict + `) DO UPDATE SET ` + set
	}, func(i int, args []any) []any { return argsOf(keys[i], rows[keys[i]], args) })
}
