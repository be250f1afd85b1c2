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
}

// TopologyEdges returns every edge, by id.
func (db *DB) TopologyEdges(ctx context.Context) ([]TopoEdge, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT id, a_kind, a_id, a_name, a_port, b_kind, b_id, b_name, b_port, b_addr, source, ts
		FROM topology_edges ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("topology edges: %w", err)
	}
	defer rows.Close()
	out := []TopoEdge{}
	for rows.Next() {
		var e TopoEdge
		if err := rows.Scan(&e.ID, &e.AKind, &e.AID, &e.AName, &e.APort, &e.BKind, &e.BID, &e.BName, &e.BPort, &e.BAddr, &e.Source, &e.TS); err != nil {
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

// IfaceStatus is an interface's state in its device's latest poll.
type IfaceStatus struct {
	DeviceID  int64
	Name      string
	OperUp    bool
	RxUtilPct *float64
	TxUtilPct *float64
}

// LatestIfaceStatus returns the interfaces of every device's latest poll
// at or after since: what link status is computed from.
func (db *DB) LatestIfaceStatus(ctx context.Context, since int64) ([]IfaceStatus, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT i.device_id, i.name, i.oper_up, i.rx_util_pct, i.tx_util_pct FROM device_ifaces i
		JOIN (SELECT device_id, MAX(ts) AS ts FROM device_ifaces WHERE ts >= $1 GROUP BY device_id) m ON i.device_id = m.device_id AND i.ts = m.ts`, since)
	if err != nil {
		return nil, fmt.Errorf("latest interface status: %w", err)
	}
	defer rows.Close()
	var out []IfaceStatus
	for rows.Next() {
		var s IfaceStatus
		if err := rows.Scan(&s.DeviceID, &s.Name, &s.OperUp, &s.RxUtilPct, &s.TxUtilPct); err != nil {
			return nil, fmt.Errorf("latest interface status: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
