package store

import (
	"context"
	"fmt"
)

// ObservedName is a name an agent was seen using (the ioc rule's input):
// a DNS name (kind dns) or a TLS SNI / HTTP Host (kind tls, http), with
// the minute it was last reported.
type ObservedName struct {
	AgentID int64
	Site    string
	Name    string
	Kind    string
	TS      int64
}

// ObservedNames lists the distinct names agents reported in a minute
// starting at or after since, from the last-report tables (indexed by
// ts), newest report per agent and name.
func (db *DB) ObservedNames(ctx context.Context, since int64) ([]ObservedName, error) {
	rows, err := db.reader.QueryContext(ctx, `SELECT agent_id, site, domain, 'dns', MAX(ts) FROM agent_dns_last WHERE ts >= $1 GROUP BY agent_id, site, domain
		UNION ALL
		SELECT agent_id, site, host, kind, MAX(ts) FROM agent_l7_last WHERE ts >= $1 GROUP BY agent_id, site, host, kind`, since)
	if err != nil {
		return nil, fmt.Errorf("observed names: %w", err)
	}
	defer rows.Close()
	var out []ObservedName
	for rows.Next() {
		var n ObservedName
		if err := rows.Scan(&n.AgentID, &n.Site, &n.Name, &n.Kind, &n.TS); err != nil {
			return nil, fmt.Errorf("observed names: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
