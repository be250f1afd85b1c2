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
// the rollups (see fleetList); one agent's list reads its own rows.
func (db *DB) TopProcesses(ctx context.Context, s DeepScope, limit int) ([]ProcessItem, error) {
	out := []ProcessItem{}
	if s.AgentID > 0 {
		w, args := s.where()
		args = append(args, limit)
		rows, err := db.reader.QueryContext(ctx, `SELECT process, SUM(bytes_in), SUM(bytes_out) FROM agent_proc_minutes`+w+`
			GROUP BY process ORDER BY SUM(bytes_in) + SUM(bytes_out) DESC, process LIMIT $`+fmt.Sprint(len(args)), args...)
		if err != nil {
			return nil, fmt.Errorf("top processes: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			p := ProcessItem{AgentCount: 1}
			if err := rows.Scan(&p.Process, &p.BytesIn, &p.BytesOut); err != nil {
				return nil, fmt.Errorf("top processes: %w", err)
			}
			p.Total = p.BytesIn + p.BytesOut
			out = append(out, p)
		}
		return out, rows.Err()
	}
	rs, err := db.fleetTop(ctx, procList, s.From-s.From%60, s.Site, limit)
	for _, r := range rs {
		out = append(out, ProcessItem{Process: r.k[0], BytesIn: r.sums[0], BytesOut: r.sums[1], Total: r.sums[0] + r.sums[1], AgentCount: r.agents})
	}
	return out, err
}

// TopL7 sums L7 observations per host, kind and process over the scope,
// most bytes first (then most hits), at most limit; fleet-wide and
// per-site lists read the rollups (see fleetList).
func (db *DB) TopL7(ctx context.Context, s DeepScope, limit int) ([]L7Item, error) {
	if s.AgentID == 0 {
		rs, err := db.fleetTop(ctx, l7List, s.From-s.From%60, s.Site, limit)
		out := []L7Item{}
		for _, r := range rs {
			out = append(out, L7Item{Host: r.k[0], Kind: r.k[1], Process: r.k[2], Bytes: r.sums[0], Hits: r.sums[1], AgentCount: r.agents})
		}
		return out, err
	}
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
// queries first, at most limit; fleet-wide and per-site lists read the
// rollups (see fleetList).
func (db *DB) TopDNS(ctx context.Context, s DeepScope, limit int) ([]DNSItem, error) {
	if s.AgentID == 0 {
		rs, err := db.fleetTop(ctx, dnsList, s.From-s.From%60, s.Site, limit)
		out := []DNSItem{}
		for _, r := range rs {
			out = append(out, DNSItem{Domain: r.k[0], Process: r.k[1], Queries: r.sums[0], Responses: r.sums[1], AgentCount: r.agents})
		}
		return out, err
	}
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
