package store

import (
	"context"
	"fmt"
)

// Topology edges (spec 2.12): links the device pollers reported (LLDP,
// CDP, ARP) and uplinks set by hand. app/topology resolves the ends and
// builds the graph; this file keeps the rows.

// TopoEdge is a stored edge. An end is a device or an agent by id, or a
// neighbour known only by name (kind "neighbor", id 0).
type TopoEdge struct {
	ID     int64
	AKind  string
	AID    int64
	AName  string
	APort  string
	BKind  string
	BID    int64
	BName  string
	BPort  string
	BAddr  string
	Source string
	TS     int64
	// UtilPct and PortDown are the a-end port's state in its device's
	// latest poll (device ends only).
	UtilPct  *float64
	PortDown bool
}

// TopologyEdges returns every edge, by id.
func (db *DB) TopologyEdges(ctx context.Context) ([]TopoEdge, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, a_kind, a_id, a_name, a_port, b_kind, b_id, b_name, b_port, b_addr, source, ts, util_pct, port_down
		FROM topology_edges ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("topology edges: %w", err)
	}
	defer rows.Close()
	out := []TopoEdge{}
	for rows.Next() {
		var e TopoEdge
		if err := rows.Scan(&e.ID, &e.AKind, &e.AID, &e.AName, &e.APort, &e.BKind, &e.BID, &e.BName, &e.BPort, &e.BAddr, &e.Source, &e.TS, &e.UtilPct, &e.PortDown); err != nil {
			return nil, fmt.Errorf("topology edges: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// PruneTopologyEdges deletes discovered and inferred edges last seen
// before `before`; manual ones stay until changed. It returns how many
// went.
func (db *DB) PruneTopologyEdges(ctx context.Context, before int64) (int64, error) {
	res, err := db.exec(ctx, `DELETE FROM topology_edges WHERE source <> 'manual' AND ts < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("prune topology edges: %w", err)
	}
	return res.RowsAffected()
}

// SetUplink replaces the manual uplink of an agent or device (kind) inside
// t: its edge to device devID on port. devID 0 removes it.
func (t *Tx) SetUplink(ctx context.Context, kind string, id, devID int64, port string, ts int64) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM topology_edges WHERE source = 'manual' AND a_kind = $1 AND a_id = $2`, kind, id); err != nil {
		return fmt.Errorf("set uplink of %s %d: %w", kind, id, err)
	}
	if devID == 0 {
		return nil
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO topology_edges (a_kind, a_id, b_kind, b_id, b_port, source, ts) VALUES ($1, $2, 'device', $3, $4, 'manual', $5)`,
		kind, id, devID, cleanText(port), ts); err != nil {
		return fmt.Errorf("set uplink of %s %d: %w", kind, id, err)
	}
	return nil
}

// InsertTopoEdges upserts edges (a bulk seed for benchmarks and tests):
// same ends and source keep one row with the newest ts.
func (db *DB) InsertTopoEdges(ctx context.Context, edges []TopoEdge) error {
	return db.InTx(ctx, func(t *Tx) error {
		for _, e := range edges {
			const q = `INSERT INTO topology_edges (a_kind, a_id, a_name, a_port, b_kind, b_id, b_name, b_port, b_addr, source, ts)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
				ON CONFLICT (a_kind, a_id, a_port, b_kind, b_id, b_name, b_port, source) DO UPDATE SET ts = excluded.ts`
			if _, err := t.tx.ExecContext(ctx, q, e.AKind, e.AID, e.AName, e.APort, e.BKind, e.BID, e.BName, e.BPort, e.BAddr, e.Source, e.TS); err != nil {
				return fmt.Errorf("insert topology edge: %w", err)
			}
		}
		return nil
	})
}

// TopoAgent is an agent as the topology shows it.
type TopoAgent struct {
	ID       int64
	Name     string
	Site     string
	RemoteIP string
	LastSeen int64
	// Counters is the agent's latest interface list as stored (JSON of
	// wire.Interface: the topology reads its addrs).
	Counters string
}

// TopologyAgents lists agents (site "" = all) with only what the graph
// shows: the list of ListAgents carries every agent's rates.
func (db *DB) TopologyAgents(ctx context.Context, site string) ([]TopoAgent, error) {
	q := `SELECT id, name, site, remote_ip, last_seen, counters FROM agents`
	var args []any
	if site != "" {
		q += ` WHERE site = $1`
		args = append(args, site)
	}
	rows, err := db.reader.QueryContext(ctx, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("topology agents: %w", err)
	}
	defer rows.Close()
	out := []TopoAgent{}
	for rows.Next() {
		var a TopoAgent
		if err := rows.Scan(&a.ID, &a.Name, &a.Site, &a.RemoteIP, &a.LastSeen, &a.Counters); err != nil {
			return nil, fmt.Errorf("topology agents: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
