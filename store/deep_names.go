package store

import (
	"context"
	"fmt"
	"time"

	"netmon/store/record"
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

// Names is the store's part of the ioc rule's names (the alert engine's
// NameSource): the names agents reported since a time.
func (db *DB) Names(ctx context.Context, since time.Time) ([]record.ObservedName, error) {
	ns, err := db.ObservedNames(ctx, since.Unix())
	if err != nil {
		return nil, err
	}
	out := make([]record.ObservedName, 0, len(ns))
	for _, n := range ns {
		out = append(out, record.ObservedName{AgentID: n.AgentID, Site: n.Site, Name: n.Name, Source: n.Kind, TS: n.TS})
	}
	return out, nil
}
