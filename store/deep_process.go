package store

import (
	"context"
	"fmt"
)

// ProcessMinute is one minute of one process of an agent: one row per PID
// (and, for (unattributed), per reason).
type ProcessMinute struct {
	TS       int64
	PID      int32
	Reason   string
	BytesIn  int64
	BytesOut int64
}

// detailRows bounds each list of a process detail: a process talking to
// more destinations or names shows its busiest.
const detailRows = 200

// ProcessMinutes returns agent's minute rows of process since from, oldest
// first.
func (db *DB) ProcessMinutes(ctx context.Context, agent int64, process string, from int64) ([]ProcessMinute, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT ts, pid, reason, bytes_in, bytes_out FROM agent_proc_minutes
		WHERE agent_id = $1 AND ts >= $2 AND process = $3 ORDER BY ts, pid, reason`, agent, from-from%60, process)
	if err != nil {
		return nil, fmt.Errorf("process minutes: %w", err)
	}
	defer rows.Close()
	out := []ProcessMinute{}
	for rows.Next() {
		var m ProcessMinute
		if err := rows.Scan(&m.TS, &m.PID, &m.Reason, &m.BytesIn, &m.BytesOut); err != nil {
			return nil, fmt.Errorf("process minutes: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ProcessDestination is a remote end a process had sockets to.
type ProcessDestination struct {
	RemoteIP   string `json:"remote_ip"`
	RemotePort int    `json:"remote_port"`
	Proto      string `json:"proto"`
	// Sockets is the sockets seen there, summed over the batches.
	Sockets   int64 `json:"sockets" jsonschema_description:"sockets seen to this end, summed over the window's telemetry batches"`
	FirstSeen int64 `json:"first_seen" jsonschema_description:"start of the first minute it was seen, Unix seconds"`
	LastSeen  int64 `json:"last_seen" jsonschema_description:"start of the last minute it was seen, Unix seconds"`
}

// ProcessDestinations returns the remote ends of agent's process since
// from, most sockets first, at most detailRows.
func (db *DB) ProcessDestinations(ctx context.Context, agent int64, process string, from int64) ([]ProcessDestination, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT remote_ip, remote_port, proto, SUM(count), MIN(ts), MAX(ts) FROM agent_conn_minutes
		WHERE agent_id = $1 AND ts >= $2 AND process = $3 GROUP BY remote_ip, remote_port, proto
		ORDER BY SUM(count) DESC, remote_ip, remote_port, proto LIMIT $4`, agent, from-from%60, process, detailRows)
	if err != nil {
		return nil, fmt.Errorf("process destinations: %w", err)
	}
	defer rows.Close()
	out := []ProcessDestination{}
	for rows.Next() {
		var d ProcessDestination
		if err := rows.Scan(&d.RemoteIP, &d.RemotePort, &d.Proto, &d.Sockets, &d.FirstSeen, &d.LastSeen); err != nil {
			return nil, fmt.Errorf("process destinations: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// ProcessName is a DNS name or an SNI/Host a process used.
type ProcessName struct {
	// Kind is dns, tls or http.
	Kind string `json:"kind" jsonschema_description:"dns (a DNS query), tls (ClientHello SNI) or http (HTTP Host)"`
	Name string `json:"name" jsonschema_description:"the domain or host, stored as text"`
	// Count is queries (dns) or hits (tls, http).
	Count int64 `json:"count" jsonschema_description:"queries (dns) or connections carrying the name (tls, http)"`
	// Answers is DNS responses (0 for tls and http); Bytes the L7 bytes
	// (0 for dns).
	Answers   int64 `json:"answers"`
	Bytes     int64 `json:"bytes"`
	FirstSeen int64 `json:"first_seen"`
	LastSeen  int64 `json:"last_seen"`
}

// ProcessNames returns the DNS names and L7 hosts agent's process used
// since from: names by most queries, then hosts by most bytes, each list at
// most detailRows.
func (db *DB) ProcessNames(ctx context.Context, agent int64, process string, from int64) ([]ProcessName, error) {
	from -= from % 60
	out := []ProcessName{}
	scan := func(q string) error {
		rows, err := db.reader.QueryContext(ctx, q, agent, from, process, detailRows)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n ProcessName
			if err := rows.Scan(&n.Kind, &n.Name, &n.Count, &n.Answers, &n.Bytes, &n.FirstSeen, &n.LastSeen); err != nil {
				return err
			}
			out = append(out, n)
		}
		return rows.Err()
	}
	if err := scan(`SELECT 'dns', domain, SUM(queries), SUM(responses), 0, MIN(ts), MAX(ts) FROM agent_dns_minutes
		WHERE agent_id = $1 AND ts >= $2 AND process = $3 GROUP BY domain ORDER BY SUM(queries) DESC, domain LIMIT $4`); err != nil {
		return nil, fmt.Errorf("process names: %w", err)
	}
	if err := scan(`SELECT kind, host, SUM(hits), 0, SUM(bytes), MIN(ts), MAX(ts) FROM agent_l7_minutes
		WHERE agent_id = $1 AND ts >= $2 AND process = $3 GROUP BY kind, host ORDER BY SUM(bytes) DESC, kind, host LIMIT $4`); err != nil {
		return nil, fmt.Errorf("process names: %w", err)
	}
	return out, nil
}
