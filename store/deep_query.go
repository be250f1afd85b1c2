package store

import (
	"context"
	"fmt"
)

// ProcessItem is one row of GET /api/v1/processes (spec 2.9): a process
// name's bytes summed over the window and the agents it ran on.
type ProcessItem struct {
	Process    string `json:"process" jsonschema_description:"process name; (unattributed) holds the bytes the agents could not tie to a process"`
	BytesIn    int64  `json:"bytes_in"`
	BytesOut   int64  `json:"bytes_out"`
	Total      int64  `json:"total" jsonschema_description:"bytes_in + bytes_out"`
	AgentCount int64  `json:"agent_count" jsonschema_description:"distinct agents that reported the process in the window"`
}

// L7Item is one row of GET /api/v1/l7 (spec 2.9), grouped by host, kind
// and process.
type L7Item struct {
	Host       string `json:"host" jsonschema_description:"TLS SNI or HTTP Host as sent by the client, stored as text"`
	Kind       string `json:"kind" jsonschema_description:"tls (ClientHello SNI) or http (HTTP/1.x Host)"`
	Process    string `json:"process"`
	Bytes      int64  `json:"bytes"`
	Hits       int64  `json:"hits"`
	AgentCount int64  `json:"agent_count"`
}

// DNSItem is one row of GET /api/v1/dns (spec 2.9), grouped by domain and
// process.
type DNSItem struct {
	Domain     string `json:"domain"`
	Process    string `json:"process"`
	Queries    int64  `json:"queries"`
	Responses  int64  `json:"responses"`
	AgentCount int64  `json:"agent_count"`
}

// DeepScope selects the agents of a deep collection query.
type DeepScope struct {
	// From is the window's start, Unix seconds (rounded down to its minute).
	From int64
	// AgentID keeps one agent's rows (0: all).
	AgentID int64
	// Site keeps the rows of that site's agents ("" = all sites).
	Site string
}

// where is the scope's condition and arguments, numbered from 1.
func (s DeepScope) where() (string, []any) {
	q := ` WHERE ts >= $1`
	args := []any{s.From - s.From%60}
	if s.AgentID > 0 {
		args = append(args, s.AgentID)
		q += fmt.Sprintf(` AND agent_id = $%d`, len(args))
	}
	if s.Site != "" {
		args = append(args, s.Site)
		q += fmt.Sprintf(` AND agent_id IN (SELECT id FROM agents WHERE site = $%d)`, len(args))
	}
	return q, args
}

// TopProcesses sums bytes per process name over the scope, largest total
// first (ties by name), at most limit. Fleet-wide and per-site lists read
// the per-site minute sums and count the agents of the listed processes
// only; one agent's list reads its own rows.
func (db *DB) TopProcesses(ctx context.Context, s DeepScope, limit int) ([]ProcessItem, error) {
	if s.AgentID > 0 {
		return db.agentProcesses(ctx, s, limit)
	}
	from := s.From - s.From%60
	out := []ProcessItem{}
	// Processes whose every agent was deleted keep zero sums until
	// retention; they are skipped, so more candidates may be needed.
	for offset, batch := 0, limit+8; len(out) < limit; offset, batch = offset+batch, batch*2 {
		q := `SELECT process, SUM(bytes_in), SUM(bytes_out) FROM proc_site_minutes WHERE ts >= $1`
		args := []any{from}
		if s.Site != "" {
			args = append(args, s.Site)
			q += ` AND site = $2`
		}
		args = append(args, batch, offset)
		q += fmt.Sprintf(` GROUP BY process ORDER BY SUM(bytes_in) + SUM(bytes_out) DESC, process LIMIT $%d OFFSET $%d`, len(args)-1, len(args))
		cands, err := db.processSums(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		if err := db.countProcessAgents(ctx, cands, from, s.Site); err != nil {
			return nil, err
		}
		for _, c := range cands {
			if c.AgentCount > 0 && len(out) < limit {
				out = append(out, c)
			}
		}
		if len(cands) < batch {
			break
		}
	}
	return out, nil
}

// agentProcesses is TopProcesses of one agent.
func (db *DB) agentProcesses(ctx context.Context, s DeepScope, limit int) ([]ProcessItem, error) {
	w, args := s.where()
	args = append(args, limit)
	out, err := db.processSums(ctx, `SELECT process, SUM(bytes_in), SUM(bytes_out) FROM agent_proc_minutes`+w+` GROUP BY process
		ORDER BY SUM(bytes_in) + SUM(bytes_out) DESC, process LIMIT $`+fmt.Sprint(len(args)), args...)
	for i := range out {
		out[i].AgentCount = 1
	}
	return out, err
}

func (db *DB) processSums(ctx context.Context, q string, args ...any) ([]ProcessItem, error) {
	rows, err := db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("top processes: %w", err)
	}
	defer rows.Close()
	out := []ProcessItem{}
	for rows.Next() {
		var p ProcessItem
		if err := rows.Scan(&p.Process, &p.BytesIn, &p.BytesOut); err != nil {
			return nil, fmt.Errorf("top processes: %w", err)
		}
		p.Total = p.BytesIn + p.BytesOut
		out = append(out, p)
	}
	return out, rows.Err()
}

// countProcessAgents sets the agent count of each of ps: the agents (of
// site, when set) that reported it at or after from.
func (db *DB) countProcessAgents(ctx context.Context, ps []ProcessItem, from int64, site string) error {
	if len(ps) == 0 {
		return nil
	}
	args := []any{from}
	q := `SELECT process, COUNT(*) FROM agent_proc_last WHERE ts >= $1`
	if site != "" {
		args = append(args, site)
		q += ` AND site = $2`
	}
	q += ` AND process IN (`
	idx := make(map[string]int, len(ps))
	for i, p := range ps {
		if i > 0 {
			q += ","
		}
		args = append(args, p.Process)
		q += fmt.Sprintf("$%d", len(args))
		idx[p.Process] = i
	}
	rows, err := db.reader.QueryContext(ctx, q+`) GROUP BY process`, args...)
	if err != nil {
		return fmt.Errorf("count process agents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return fmt.Errorf("count process agents: %w", err)
		}
		ps[idx[name]].AgentCount = n
	}
	return rows.Err()
}

// TopL7 sums L7 observations per host, kind and process over the scope,
// most bytes first (then most hits), at most limit.
func (db *DB) TopL7(ctx context.Context, s DeepScope, limit int) ([]L7Item, error) {
	w, args := s.where()
	args = append(args, limit)
	rows, err := db.reader.QueryContext(ctx, `SELECT host, kind, process, SUM(bytes), SUM(hits), COUNT(DISTINCT agent_id)
		FROM agent_l7_minutes`+w+` GROUP BY host, kind, process
		ORDER BY SUM(bytes) DESC, SUM(hits) DESC, host, kind, process LIMIT $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("top l7: %w", err)
	}
	defer rows.Close()
	out := []L7Item{}
	for rows.Next() {
		var h L7Item
		if err := rows.Scan(&h.Host, &h.Kind, &h.Process, &h.Bytes, &h.Hits, &h.AgentCount); err != nil {
			return nil, fmt.Errorf("top l7: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// TopDNS sums DNS queries per domain and process over the scope, most
// queries first, at most limit.
func (db *DB) TopDNS(ctx context.Context, s DeepScope, limit int) ([]DNSItem, error) {
	w, args := s.where()
	args = append(args, limit)
	rows, err := db.reader.QueryContext(ctx, `SELECT domain, process, SUM(queries), SUM(responses), COUNT(DISTINCT agent_id)
		FROM agent_dns_minutes`+w+` GROUP BY domain, process
		ORDER BY SUM(queries) DESC, SUM(responses) DESC, domain, process LIMIT $`+fmt.Sprint(len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("top dns: %w", err)
	}
	defer rows.Close()
	out := []DNSItem{}
	for rows.Next() {
		var d DNSItem
		if err := rows.Scan(&d.Domain, &d.Process, &d.Queries, &d.Responses, &d.AgentCount); err != nil {
			return nil, fmt.Errorf("top dns: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}
