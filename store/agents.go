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

// AgentTables are the raw time series of agents, for the retention loop.
var AgentTables = []string{"agent_samples"}

// Agent is an enrolled agent with its latest telemetry (spec 2.9). Rates,
// Counters and Connections are JSON arrays as the intake encoded them.
type Agent struct {
	ID              int64
	Name            string
	Site            string
	MachineID       string
	TokenHash       string
	Version         string
	ProtocolVersion int
	OS, Arch        string
	RemoteIP        string
	EnrollTokenID   int64
	EnrolledAt      int64
	LastSeen        int64
	LastSeq         uint64
	AttrMethod      string
	AttrIface       string
	AttrNote        string
	Rates           string
	Counters        string
	Conns           int
	Connections     string
	Dropped         uint64
	CertNotAfter    int64
}

// agentListColumns leave out the connection inventory, which only the
// detail needs and which is most of a row's size.
const agentListColumns = `id, name, site, machine_id, token_hash, version, protocol_version, os, arch, remote_ip,
	enroll_token_id, enrolled_at, last_seen, last_seq, attr_method, attr_iface, attr_note, rates, counters, conns, dropped, cert_not_after`

func scanAgent(r rowScanner, withConns bool) (Agent, error) {
	var a Agent
	var lastSeq, dropped int64
	dest := []any{&a.ID, &a.Name, &a.Site, &a.MachineID, &a.TokenHash, &a.Version, &a.ProtocolVersion, &a.OS, &a.Arch, &a.RemoteIP,
		&a.EnrollTokenID, &a.EnrolledAt, &a.LastSeen, &lastSeq, &a.AttrMethod, &a.AttrIface, &a.AttrNote, &a.Rates, &a.Counters, &a.Conns, &dropped, &a.CertNotAfter}
	if withConns {
		dest = append(dest, &a.Connections)
	}
	err := r.Scan(dest...)
	a.LastSeq, a.Dropped = uint64(lastSeq), uint64(dropped)
	return a, err
}

// MachineOfOtherSiteError is CreateAgent's refusal to replace an agent
// of another site: a machine id is the agent's own word, so an enroll
// token of one site must not delete what another site enrolled.
type MachineOfOtherSiteError struct {
	// AgentID and Site are the enrolled agent that holds the machine id.
	AgentID int64
	Site    string
}

func (e *MachineOfOtherSiteError) Error() string {
	return fmt.Sprintf("machine id held by agent %d of site %q", e.AgentID, e.Site)
}

// CreateAgent stores a newly enrolled agent and returns its id. An agent
// of the same site with the same machine id is deleted first, with all
// its data: the same machine re-enrolling gets a clean new record (spec
// 3), and its old token and certificate stop resolving. replaced is that
// agent's id, 0 if none. An agent of another site with that machine id is
// left untouched and the call fails with *MachineOfOtherSiteError.
func (t *Tx) CreateAgent(ctx context.Context, a Agent) (id, replaced int64, err error) {
	if a.MachineID != "" {
		// The "<> ''" repeats the partial index's condition: with only a
		// bound parameter the planners cannot prove it and scan the table.
		var site string
		err := t.tx.QueryRowContext(ctx, `SELECT id, site FROM agents WHERE machine_id = $1 AND machine_id <> ''`, a.MachineID).Scan(&replaced, &site)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, 0, fmt.Errorf("create agent: %w", err)
		}
		if replaced != 0 && site != a.Site {
			return 0, 0, &MachineOfOtherSiteError{AgentID: replaced, Site: site}
		}
		if replaced != 0 {
			if err := t.deleteAgentRows(ctx, replaced); err != nil {
				return 0, 0, fmt.Errorf("create agent: %w", err)
			}
		}
	}
	const q = `INSERT INTO agents (name, site, machine_id, token_hash, version, protocol_version, os, arch, remote_ip,
		enroll_token_id, enrolled_at, attr_method, cert_not_after)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'off', $12) RETURNING id`
	err = t.tx.QueryRowContext(ctx, q, cleanText(a.Name), a.Site, a.MachineID, a.TokenHash, cleanText(a.Version), a.ProtocolVersion,
		cleanText(a.OS), cleanText(a.Arch), a.RemoteIP, a.EnrollTokenID, a.EnrolledAt, a.CertNotAfter).Scan(&id)
	if err != nil {
		return 0, 0, fmt.Errorf("create agent: %w", err)
	}
	return id, replaced, nil
}

func (t *Tx) deleteAgentRows(ctx context.Context, id int64) error {
	// Samples go explicitly (not only by the foreign key's cascade) so the
	// statement is the same on both databases whatever their settings.
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM agent_samples WHERE agent_id = $1`, id); err != nil {
		return err
	}
	if err := t.deleteDeepRows(ctx, id); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `DELETE FROM agents WHERE id = $1`, id)
	return err
}

// AgentByTokenHash returns the agent whose token hashes to hash.
func (db *DB) AgentByTokenHash(ctx context.Context, hash string) (Agent, error) {
	a, err := scanAgent(db.reader.QueryRowContext(ctx, `SELECT `+agentListColumns+` FROM agents WHERE token_hash = $1`, hash), false)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("get agent: %w", ErrNotFound)
	}
	if err != nil {
		return Agent{}, fmt.Errorf("get agent: %w", err)
	}
	return a, nil
}

// Agent returns agent id with its connection inventory.
func (db *DB) Agent(ctx context.Context, id int64) (Agent, error) {
	a, err := scanAgent(db.reader.QueryRowContext(ctx, `SELECT `+agentListColumns+`, connections FROM agents WHERE id = $1`, id), true)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("get agent %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Agent{}, fmt.Errorf("get agent %d: %w", id, err)
	}
	return a, nil
}

// ListAgents returns the agents by id, without connection inventories;
// site != "" keeps only that site's.
func (db *DB) ListAgents(ctx context.Context, site string) ([]Agent, error) {
	q := `SELECT ` + agentListColumns + ` FROM agents`
	var args []any
	if site != "" {
		q += ` WHERE site = $1`
		args = append(args, site)
	}
	rows, err := db.reader.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	defer rows.Close()
	out := []Agent{}
	for rows.Next() {
		a, err := scanAgent(rows, false)
		if err != nil {
			return nil, fmt.Errorf("list agents: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// DeleteAgent deletes agent id and its data and returns it as it was.
func (t *Tx) DeleteAgent(ctx context.Context, id int64) (Agent, error) {
	a, err := scanAgent(t.tx.QueryRowContext(ctx, `SELECT `+agentListColumns+` FROM agents WHERE id = $1`, id), false)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("delete agent %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Agent{}, fmt.Errorf("delete agent %d: %w", id, err)
	}
	if err := t.deleteAgentRows(ctx, id); err != nil {
		return Agent{}, fmt.Errorf("delete agent %d: %w", id, err)
	}
	return a, nil
}

// RenameAgent sets agent id's display name.
func (t *Tx) RenameAgent(ctx context.Context, id int64, name string) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE agents SET name = $1 WHERE id = $2`, cleanText(name), id)
	if err != nil {
		return fmt.Errorf("rename agent %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("rename agent %d: %w", id, ErrNotFound)
	}
	return nil
}

// SetAgentCert records the expiry of the client certificate last issued
// to agent id.
func (db *DB) SetAgentCert(ctx context.Context, id, notAfter int64) error {
	if _, err := db.exec(ctx, `UPDATE agents SET cert_not_after = $1 WHERE id = $2`, notAfter, id); err != nil {
		return fmt.Errorf("set agent %d certificate: %w", id, err)
	}
	return nil
}

// OfflineAgents returns the ids of agents not seen since before (never
// seen: enrolled before it), for the archive of offline agents.
func (db *DB) OfflineAgents(ctx context.Context, before int64) ([]int64, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id FROM agents
		WHERE (last_seen > 0 AND last_seen < $1) OR (last_seen = 0 AND enrolled_at < $1) ORDER BY id`, before)
	if err != nil {
		return nil, fmt.Errorf("list offline agents: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list offline agents: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// telemetryChunk is how many batches are written between two looks for a
// waiting priority writer (a few milliseconds of work).
const telemetryChunk = 256

// WriteTelemetry stores telemetry batches as bulk ingest (see DB.ingest):
// one history sample per (agent, seq) — a repeated seq is ignored — and
// each agent's latest state from its highest seq. Batches of agents
// deleted meanwhile are dropped silently: the agent is gone. It returns
// how many of ts are committed, also on error: retry only the rest.
func (db *DB) WriteTelemetry(ctx context.Context, ts []record.Telemetry) (int, error) {
	n, err := db.ingest(ctx, len(ts), telemetryChunk, func(tx *sql.Tx, from, to int) error {
		return db.writeTelemetry(ctx, tx, ts[from:to])
	})
	if err != nil {
		return n, fmt.Errorf("write telemetry: %w", err)
	}
	return n, nil
}

// writeTelemetry writes one chunk of batches in tx. Each chunk stands on
// its own: the last_seq guard keeps an older chunk from overwriting a
// newer state, and dropped counts add up in any order.
func (db *DB) writeTelemetry(ctx context.Context, tx *sql.Tx, ts []record.Telemetry) error {
	// Latest batch per agent: only it updates the agent row. Parallel
	// queue writers may hold older batches of the same agent; the
	// last_seq guard keeps them from overwriting a newer state.
	latest := make(map[int64]int, len(ts))
	dropped := make(map[int64]uint64)
	for i := range ts {
		if ts[i].Dropped > 0 {
			dropped[ts[i].AgentID] += ts[i].Dropped
		}
		if j, ok := latest[ts[i].AgentID]; !ok || ts[i].Seq > ts[j].Seq {
			latest[ts[i].AgentID] = i
		}
	}
	order := make([]int, 0, len(latest))
	for _, i := range latest {
		order = append(order, i)
	}
	// A fixed lock order (agent id) keeps two PostgreSQL writers from
	// deadlocking on each other's agent rows.
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(ts[a].AgentID, ts[b].AgentID) })
	{
		err := execValues(ctx, tx, len(ts), func(n int) string {
			return `INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns)
				SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8, v.column9
				FROM (VALUES ` + valuesList(db.dialect, n, sampleTypes) + `) AS v
				WHERE EXISTS (SELECT 1 FROM agents a WHERE a.id = v.column1)
				ON CONFLICT (agent_id, seq) DO NOTHING`
		}, func(i int, args []any) []any {
			t := &ts[i]
			return append(args, t.AgentID, int64(t.Seq), t.TS, t.In, t.Out, t.Local, t.PPS, t.HasRates, t.Conns)
		})
		if err != nil {
			return err
		}
		err = execValues(ctx, tx, len(order), func(n int) string {
			return `UPDATE agents SET last_seen = v.column2, last_seq = v.column3, remote_ip = v.column4,
				version = CASE WHEN v.column5 <> '' THEN v.column5 ELSE agents.version END,
				attr_method = v.column6, attr_iface = v.column7, attr_note = v.column8, rates = v.column9, counters = v.column10,
				conns = v.column11, connections = v.column12
				FROM (VALUES ` + valuesList(db.dialect, n, agentStateTypes) + `) AS v
				WHERE agents.id = v.column1 AND agents.last_seq < v.column3`
		}, func(k int, args []any) []any {
			t := &ts[order[k]]
			method := t.AttrMethod
			if method == "" {
				method = "off"
			}
			return append(args, t.AgentID, t.TS, int64(t.Seq), t.RemoteIP, cleanText(t.Version), method,
				cleanText(t.AttrIface), cleanText(t.AttrNote), string(t.Rates), string(t.Counters), t.Conns, cleanText(string(t.Connections)))
		})
		if err != nil {
			return err
		}
		// Dropped counts add up whatever order the batches arrive in.
		for id, n := range dropped {
			if _, err := tx.ExecContext(ctx, `UPDATE agents SET dropped = dropped + $1 WHERE id = $2`, int64(n), id); err != nil {
				return err
			}
		}
		return nil
	}
}

// AgentSample is one history point of an agent (spec 2.9 history item):
// bytes/s and packets/s between its batch and the one before.
type AgentSample struct {
	TS    int64   `json:"ts"`
	In    float64 `json:"in"`
	Out   float64 `json:"out"`
	Local float64 `json:"local"`
	PPS   float64 `json:"pps"`
}

// AgentHistory returns agent id's samples since from that carry rates,
// oldest first.
func (db *DB) AgentHistory(ctx context.Context, id, from int64) ([]AgentSample, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT ts, rx_bps, tx_bps, local_bps, pps FROM agent_samples
		WHERE agent_id = $1 AND ts >= $2 AND has_rate ORDER BY ts, seq`, id, from)
	if err != nil {
		return nil, fmt.Errorf("agent %d history: %w", id, err)
	}
	defer rows.Close()
	out := []AgentSample{}
	for rows.Next() {
		var s AgentSample
		if err := rows.Scan(&s.TS, &s.In, &s.Out, &s.Local, &s.PPS); err != nil {
			return nil, fmt.Errorf("agent %d history: %w", id, err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SetAgentCert is SetAgentCert within a transaction (the hello's).
func (t *Tx) SetAgentCert(ctx context.Context, id, notAfter int64) error {
	if _, err := t.tx.ExecContext(ctx, `UPDATE agents SET cert_not_after = $1 WHERE id = $2`, notAfter, id); err != nil {
		return fmt.Errorf("set agent %d certificate: %w", id, err)
	}
	return nil
}

// Column types of the VALUES lists of WriteTelemetry. PostgreSQL needs
// them (a bare parameter in VALUES is text); CAST is understood by both.
var (
	sampleTypes     = []string{"BIGINT", "BIGINT", "BIGINT", "DOUBLE PRECISION", "DOUBLE PRECISION", "DOUBLE PRECISION", "DOUBLE PRECISION", "BOOLEAN", "INTEGER"}
	agentStateTypes = []string{"BIGINT", "BIGINT", "BIGINT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "TEXT", "INTEGER", "TEXT"}
)
