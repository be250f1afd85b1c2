package rules

import (
	"fmt"
	"strconv"
	"strings"

	"netmon/store/record"
)

// KindIOC is the threat-list rule of spec 6.3.
const KindIOC = "ioc"

// SeverityIOC is the ioc rule's severity; the spec gives none. A name on
// a threat list is a compromise indicator, ranked with vpn_down just
// under a suspicious port.
const SeverityIOC = 8

// Name is a domain name a host was seen using, and IOCHit the list entry
// that matched it: store/record's, so the capture, the store and the
// threat list produce them without importing alerting.
type (
	Name   = record.ObservedName
	IOCHit = record.IOCHit
)

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

// Eval appends one alert per agent and listed entry that new reports
// matched, keyed <agent id>|<listed entry> (the entry is the parent
// domain on the list, not the observed name: 20 000 subdomains of one
// listed domain are one condition, not 20 000). The alert's Count is the
// number of new reports, and its message names the first observed names
// and how many more there were.
func (r *IOC) Eval(names []Name, m IOCMatcher, out []Alert) []Alert {
	if m == nil {
		return out
	}
	if g := m.Generation(); r.seen == nil || len(r.seen) > maxIOCSeen || g != r.gen {
		r.seen, r.gen = map[iocKey]int64{}, g
	}
	var groups []iocGroup
	var index map[iocKey]int
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
		if index == nil {
			index = map[iocKey]int{}
		}
		gk := iocKey{n.AgentID, h.Entry}
		i, ok := index[gk]
		if !ok {
			i = len(groups)
			index[gk] = i
			groups = append(groups, iocGroup{first: n, hit: h})
		}
		g := &groups[i]
		g.count++
		if len(g.sample) < iocSample {
			g.sample = append(g.sample, fmt.Sprintf("%s %q", sourceLabel(n.Source), n.Name))
		}
	}
	for _, g := range groups {
		n := g.first
		who := "the hub capture"
		if n.AgentID != 0 {
			who = fmt.Sprintf("agent %d", n.AgentID)
		}
		msg := fmt.Sprintf("%s saw %s: listed as %s in %s line %d", who, g.sample[0], g.hit.Entry, g.hit.List, g.hit.Line)
		if g.count > 1 {
			msg = fmt.Sprintf("%s saw %d names listed as %s in %s line %d: %s", who, g.count, g.hit.Entry, g.hit.List, g.hit.Line, strings.Join(g.sample, ", "))
			if more := g.count - int64(len(g.sample)); more > 0 {
				msg += " and " + Thousands(more) + " more"
			}
		}
		out = append(out, Alert{
			Kind: KindIOC, Key: fmt.Sprintf("%d|%s", n.AgentID, g.hit.Entry), Severity: SeverityIOC, Site: n.Site, AgentID: n.AgentID,
			Message: msg, Count: g.count,
		})
	}
	return out
}

// iocGroup is the new reports of one agent under one listed entry.
type iocGroup struct {
	first  Name
	hit    IOCHit
	count  int64
	sample []string
}

// iocSample is how many observed names a grouped alert's message names.
const iocSample = 5

// Thousands formats n with a space between groups of three digits
// ("19 999"), as the messages a person reads count.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
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
