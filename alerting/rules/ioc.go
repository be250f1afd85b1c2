package rules

import "fmt"

// KindIOC is the threat-list rule of spec 6.3.
const KindIOC = "ioc"

// SeverityIOC is the ioc rule's severity; the spec gives none. A name on
// a threat list is a compromise indicator, ranked with vpn_down just
// under a suspicious port.
const SeverityIOC = 8

// Name is a domain name a host was seen using: a DNS query, a TLS SNI or
// an HTTP Host.
type Name struct {
	AgentID int64 // 0: the hub's capture
	Site    string
	Name    string
	// Source is dns, tls or http.
	Source string
	// TS is when the name was last reported (the minute of an agent's
	// batch; the hub capture's count of queries for the name). The rule
	// raises a name again only when it advanced.
	TS int64
}

// IOCHit is the list entry that matched.
type IOCHit struct {
	Entry string
	List  string
	Line  int
}

// IOCMatcher looks a name up in the threat list (with parent domains).
type IOCMatcher interface {
	MatchName(name string) (IOCHit, bool)
	// Generation changes when the list is reloaded: names already seen
	// are then judged again against the new list.
	Generation() int64
}

// IOC is the ioc rule: it remembers the last report of each agent's name
// so that a name is raised once per new report, not once per cycle.
type IOC struct {
	seen map[iocKey]int64
	gen  int64
}

type iocKey struct {
	agent int64
	name  string
}

// maxIOCSeen bounds the table of reports; past it the table is cleared
// (a name still being reported is then raised once more: a repeat of its
// open event).
const maxIOCSeen = 200_000

// Eval appends an alert for each name whose report is new and that the
// list matches, keyed <agent id>|<domain>.
func (r *IOC) Eval(names []Name, m IOCMatcher, out []Alert) []Alert {
	if m == nil {
		return out
	}
	if g := m.Generation(); r.seen == nil || len(r.seen) > maxIOCSeen || g != r.gen {
		r.seen, r.gen = map[iocKey]int64{}, g
	}
	for _, n := range names {
		k := iocKey{n.AgentID, n.Name}
		if ts, ok := r.seen[k]; ok && ts >= n.TS {
			continue
		}
		r.seen[k] = n.TS
		h, ok := m.MatchName(n.Name)
		if !ok {
			continue
		}
		who := "the hub capture"
		if n.AgentID != 0 {
			who = fmt.Sprintf("agent %d", n.AgentID)
		}
		out = append(out, Alert{
			Kind: KindIOC, Key: fmt.Sprintf("%d|%s", n.AgentID, n.Name), Severity: SeverityIOC, Site: n.Site, AgentID: n.AgentID,
			Message: fmt.Sprintf("%s saw %s %q: listed as %s in %s line %d", who, sourceLabel(n.Source), n.Name, h.Entry, h.List, h.Line),
		})
	}
	return out
}

func sourceLabel(s string) string {
	switch s {
	case "tls":
		return "TLS SNI"
	case "http":
		return "HTTP Host"
	}
	return "DNS name"
}
