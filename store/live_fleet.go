package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// LiveFleetQuery says which rows the live fleet summary (spec 6.1, the
// WebSocket tick's fleet) counts; the caller computes the times from its
// clock, so the read itself has none.
type LiveFleetQuery struct {
	// OnlineSince: an agent whose last telemetry (last_seen) is at or
	// after it is online, as the agent list decides (three telemetry
	// intervals before now).
	OnlineSince int64
	// SamplesSince: the agents' samples with a rate at or after it are
	// averaged (about 90 s before now).
	SamplesSince int64
	// FlowMinute is the start of the flow minute whose records are
	// counted (a closed, written minute).
	FlowMinute int64
}

// LiveFleetSite is the fleet as one site (or every site) sees it.
type LiveFleetSite struct {
	Site         string
	AgentsOnline int
	AgentsTotal  int
	// RxBps, TxBps and Pps are each agent's mean over its samples of the
	// query's window, summed over the agents (an agent without samples
	// there adds nothing).
	RxBps, TxBps, Pps float64
	// Flows is the number of flow records summed into FlowMinute's rows:
	// for a site, those of its devices' exporters (the scope of the flow
	// reads, siteClause); for every site, all of them.
	Flows int64
}

// LiveFleet is one read of the live fleet summary.
type LiveFleet struct {
	// All is every site's (what an identity of every site sees): every
	// agent and every exporter, devices or not.
	All LiveFleetSite
	// Sites holds each site with agents or with flows of its devices, by
	// site; the hub's own agents (site "") are one of them.
	Sites []LiveFleetSite
}

// liveFleetAgentsSQL counts the agents per site and sums their mean rates
// of the window: one row per site however many agents, the samples read
// through agent_samples_ts.
const liveFleetAgentsSQL = `SELECT a.site, COUNT(*),
		SUM(CASE WHEN a.last_seen > 0 AND a.last_seen >= $1 THEN 1 ELSE 0 END),
		COALESCE(SUM(s.rx), 0), COALESCE(SUM(s.tx), 0), COALESCE(SUM(s.pps), 0)
	FROM agents a LEFT JOIN (
		SELECT agent_id, AVG(rx_bps) AS rx, AVG(tx_bps) AS tx, AVG(pps) AS pps
		FROM agent_samples WHERE has_rate AND ts >= $2 GROUP BY agent_id) s ON s.agent_id = a.id
	GROUP BY a.site ORDER BY a.site`

// liveFleetFlowsSQL sums the flow records of one minute per site of the
// exporters' devices (kind 1) and in all (kind 0, site ""). A host listed
// by two devices of one site counts once (DISTINCT).
const liveFleetFlowsSQL = `SELECT 1, d.site, SUM(f.flows) FROM flow_minutes f
		JOIN (SELECT DISTINCT site, host FROM devices WHERE host <> '') d ON d.host = f.exporter
		WHERE f.ts = $1 GROUP BY d.site
	UNION ALL SELECT 0, '', COALESCE(SUM(flows), 0) FROM flow_minutes WHERE ts = $1`

// LiveFleet reads the live fleet summary of every site and of each: two
// statements (agents, flows), each one row per site.
func (db *DB) LiveFleet(ctx context.Context, q LiveFleetQuery) (LiveFleet, error) {
	bySite := map[string]*LiveFleetSite{}
	site := func(name string) *LiveFleetSite {
		s, ok := bySite[name]
		if !ok {
			s = &LiveFleetSite{Site: name}
			bySite[name] = s
		}
		return s
	}
	var out LiveFleet
	rows, err := db.reader.QueryContext(ctx, liveFleetAgentsSQL, q.OnlineSince, q.SamplesSince)
	if err != nil {
		return LiveFleet{}, fmt.Errorf("live fleet agents: %w", err)
	}
	for rows.Next() {
		var r LiveFleetSite
		if err := rows.Scan(&r.Site, &r.AgentsTotal, &r.AgentsOnline, &r.RxBps, &r.TxBps, &r.Pps); err != nil {
			rows.Close()
			return LiveFleet{}, fmt.Errorf("live fleet agents: %w", err)
		}
		*site(r.Site) = r
		out.All.AgentsTotal += r.AgentsTotal
		out.All.AgentsOnline += r.AgentsOnline
		out.All.RxBps += r.RxBps
		out.All.TxBps += r.TxBps
		out.All.Pps += r.Pps
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return LiveFleet{}, fmt.Errorf("live fleet agents: %w", err)
	}
	rows, err = db.reader.QueryContext(ctx, liveFleetFlowsSQL, q.FlowMinute)
	if err != nil {
		return LiveFleet{}, fmt.Errorf("live fleet flows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind int
		var name string
		var flows int64
		if err := rows.Scan(&kind, &name, &flows); err != nil {
			return LiveFleet{}, fmt.Errorf("live fleet flows: %w", err)
		}
		if kind == 0 {
			out.All.Flows = flows
			continue
		}
		site(name).Flows = flows
	}
	if err := rows.Err(); err != nil {
		return LiveFleet{}, fmt.Errorf("live fleet flows: %w", err)
	}
	out.Sites = make([]LiveFleetSite, 0, len(bySite))
	for _, s := range bySite {
		out.Sites = append(out.Sites, *s)
	}
	slices.SortFunc(out.Sites, func(a, b LiveFleetSite) int { return cmp.Compare(a.Site, b.Site) })
	return out, nil
}
