package hub

import (
	"context"
	"time"

	"netmon/alerting/rules"
	"netmon/capture"
	"netmon/collectors/geo/threat"
	"netmon/store"
)

// buildThreat builds the watches of the threat list and the domain
// categories; the alert engine's ioc rule and the enrich/threatintel
// routes read their current loads.
func (h *Hub) buildThreat() {
	log := h.log.With("component", "threat")
	h.iocList = threat.NewWatch(log, "ioc", h.cfg.Threat.IOCFile, h.cfg.Threat.Poll, threat.LoadList, h.reg)
	h.categories = threat.NewWatch(log, "category", h.cfg.Threat.CategoryFile, h.cfg.Threat.Poll, threat.LoadCategories, h.reg)
	h.parts.add("ioc-list", h.iocList.Start, noCtx(h.iocList.Stop))
	h.parts.add("domain-categories", h.categories.Start, noCtx(h.categories.Stop))
}

// iocMatcher is the threat list as the ioc rule reads it.
type iocMatcher struct{ w *threat.Watch[*threat.List] }

func (m iocMatcher) MatchName(name string) (rules.IOCHit, bool) {
	h, ok := m.w.Current().Match(name)
	return rules.IOCHit{Entry: h.Entry, List: h.List, Line: h.Line}, ok
}

func (m iocMatcher) Generation() int64 { return m.w.Loads() }

// alertNames lists the names for the ioc rule: the agents' DNS names, TLS
// SNI and HTTP Hosts (deep collection) and the hub capture's DNS domains
// (the snapshot's busiest; a domain is reported again when its query
// count grows).
type alertNames struct {
	capture *capture.Capture
	db      *store.DB
}

func (a alertNames) Names(ctx context.Context, since time.Time) ([]rules.Name, error) {
	var out []rules.Name
	for _, d := range a.capture.Snapshot().TopDomains {
		out = append(out, rules.Name{Name: d.Domain, Source: "dns", TS: d.Queries + d.Responses})
	}
	ns, err := a.db.ObservedNames(ctx, since.Unix())
	if err != nil {
		return out, err
	}
	for _, n := range ns {
		out = append(out, rules.Name{AgentID: n.AgentID, Site: n.Site, Name: n.Name, Source: n.Kind, TS: n.TS})
	}
	return out, nil
}
