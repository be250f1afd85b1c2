package store

import (
	"context"
	"fmt"
)

// ProcessMinute is one minute of one process of an agent: one row per PID.
type ProcessMinute struct {
	TS       int64
	PID      int32
	BytesIn  int64
	BytesOut int64
}

// detailRows bounds each list of a process detail: a process talking to
// more destinations or names shows its busiest.
const detailRows = 200

// ProcessMinutes returns agent's minute rows of process since from, oldest
// first.
func (db *DB) ProcessMinutes(ctx context.Context, agent int64, process string, from int64) ([]ProcessMinute, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT ts, pid, bytes_in, bytes_out FROM agent_proc_minutes
		WHERE agent_id = $1 AND ts >= $2 AND process = $3 ORDER BY ts, pid`, agent, from-from%60, process)
	if err != nil {
		return nil, fmt.Errorf("process minutes: %w", err)
	}
	defer rows.Close()
	out := []ProcessMinute{}
	for rows.Next() {
		var m ProcessMinute
		if err := rows.Scan(&m.TS, &m.PID, &m.BytesIn, &m.BytesOut); err != nil {
			return nil, fmt.Errorf("process minutes: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ProcessDestination is a remote end of a process's traffic.
type ProcessDestination struct {
	RemoteIP   string `json:"remote_ip"`
	RemotePort int    `json:"remote_port"`
	Proto      string `json:"proto"`
	BytesIn    int64  `json:"bytes_in"`
	BytesOut   int64  `json:"bytes_out"`
	FirstSeen  int64  `json:"first_seen" jsonschema_description:"start of the first minute with traffic there, Unix seconds"`
	LastSeen   int64  `json:"last_seen" jsonschema_description:"start of the last minute with traffic there, Unix seconds"`
}

// ProcessDestinations returns the remote ends of agent's process since
// from, most bytes first, at most detailRows.
func (db *DB) ProcessDestinations(ctx context.Context, agent int64, process string, from int64) ([]ProcessDestination, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT remote_ip, remote_port, proto, SUM(bytes_in), SUM(bytes_out), MIN(ts), MAX(ts)
		FROM agent_remote_minutes WHERE agent_id = $1 AND ts >= $2 AND process = $3 GROUP BY remote_ip, remote_port, proto
		ORDER BY SUM(bytes_in) + SUM(bytes_out) DESC, remote_ip, remote_port, proto LIMIT $4`, agent, from-from%60, process, detailRows)
	if err != nil {
		return nil, fmt.Errorf("process destinations: %w", err)
	}
	defer rows.Close()
	out := []ProcessDestination{}
	for rows.Next() {
		var d ProcessDestination
		if err := rows.Scan(&d.RemoteIP, &d.RemotePort, &d.Proto, &d.BytesIn, &d.BytesOut, &d.FirstSeen, &d.LastSeen); err != nil {
			return nil, fmt.Errorf("process destinations: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// UnattributedReason is the (unattributed) traffic of one reason.
type UnattributedReason struct {
	Reason  string `json:"reason" jsonschema_description:"as the agent reported it (socket not found, process gone, other network namespace, kernel socket ...)"`
	Bytes   int64  `json:"bytes"`
	Packets int64  `json:"packets"`
}

// UnattributedReasons sums agent's (unattributed) traffic since from by
// reason, most bytes first.
func (db *DB) UnattributedReasons(ctx context.Context, agent int64, from int64) ([]UnattributedReason, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT reason, SUM(bytes), SUM(packets) FROM agent_unattributed_minutes
		WHERE agent_id = $1 AND ts >= $2 GROUP BY reason ORDER BY SUM(bytes) DESC, reason LIMIT $3`, agent, from-from%60, detailRows)
	if err != nil {
		return nil, fmt.Errorf("unattributed reasons: %w", err)
	}
	defer rows.Close()
	out := []UnattributedReason{}
	for rows.Next() {
		var r UnattributedReason
		if err := rows.Scan(&r.Reason, &r.Bytes, &r.Packets); err != nil {
			return nil, fmt.Errorf("unattributed reasons: %w", err)
		}
		out = append(out, r)
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
