package threat

import (
	"net/netip"
	"strings"
)

// The reputation decision of GET /api/v1/threatintel: the threat list,
// the domain categories and what the hub capture saw resolve, judged
// here where the lists live; app/api only parses the query and shapes
// the answer.

// Reputations, best to worst.
const (
	RepTrusted    = "trusted"
	RepUnknown    = "unknown"
	RepSuspicious = "suspicious"
	RepMalicious  = "malicious"
)

var repRank = map[string]int{RepTrusted: 0, RepUnknown: 1, RepSuspicious: 2, RepMalicious: 3}

// Decision is what decided a reputation: Source is ioc_list (the threat
// list), category_list (category "trusted"), capture_dns (the hub
// capture saw a listed domain resolve to the address) or builtin (a
// non-global address); Entry is the listed name or address that matched
// Subject; List and Line locate it (Line 0 for builtin).
type Decision struct {
	Source  string
	Subject string
	Entry   string
	List    string
	Line    int
}

// Verdict is the reputation of a domain, an address or both: the worst
// of their decisions (DecidedBy nil: unknown).
type Verdict struct {
	Reputation string
	DecidedBy  *Decision
}

// Resolved is a domain the hub capture saw resolve, with its addresses.
type Resolved struct {
	Domain string
	IPs    []string
}

// Decide judges domain (normalised; "" = none) and addr (invalid = none)
// against the threat list l and the categories cats (either nil: none);
// seen are the capture's resolutions, for an address a listed domain
// resolved to.
func Decide(l *List, cats *Categories, domain string, addr netip.Addr, seen []Resolved) Verdict {
	v := Verdict{Reputation: RepUnknown}
	decide := func(rep string, d Decision) {
		if v.DecidedBy == nil || repRank[rep] > repRank[v.Reputation] {
			v.Reputation, v.DecidedBy = rep, &d
		}
	}
	if domain != "" {
		if h, ok := l.Match(domain); ok {
			decide(RepMalicious, Decision{Source: "ioc_list", Subject: domain, Entry: h.Entry, List: h.List, Line: h.Line})
		} else if cat, h, ok := cats.Lookup(domain); ok && strings.EqualFold(cat, RepTrusted) {
			decide(RepTrusted, Decision{Source: "category_list", Subject: domain, Entry: h.Entry, List: h.List, Line: h.Line})
		}
	}
	if addr.IsValid() {
		ip := addr.String()
		if h, ok := l.MatchAddr(addr); ok {
			decide(RepMalicious, Decision{Source: "ioc_list", Subject: ip, Entry: h.Entry, List: h.List, Line: h.Line})
		} else if d, ok := resolvedFromListed(l, ip, seen); ok {
			decide(RepSuspicious, d)
		} else if !GlobalAddr(addr) {
			decide(RepTrusted, Decision{Source: "builtin", Subject: ip, Entry: "non-global address"})
		}
	}
	return v
}

// resolvedFromListed looks for a listed domain the hub capture saw
// resolve to ip.
func resolvedFromListed(l *List, ip string, seen []Resolved) (Decision, bool) {
	if l == nil {
		return Decision{}, false
	}
	for _, d := range seen {
		for _, x := range d.IPs {
			if x != ip {
				continue
			}
			if h, ok := l.Match(d.Domain); ok {
				return Decision{Source: "capture_dns", Subject: ip, Entry: h.Entry, List: h.List, Line: h.Line}, true
			}
		}
	}
	return Decision{}, false
}

// GlobalAddr is false for what never leaves a private network (RFC 1918,
// loopback, link-local, ULA, CGNAT, documentation, benchmarking...).
func GlobalAddr(a netip.Addr) bool {
	if a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonGlobal {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

var nonGlobal = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"), // CGNAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("203.0.113.0/24"), // documentation
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("2001:db8::/32"),
}
