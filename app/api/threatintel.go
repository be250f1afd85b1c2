package api

import (
	"net/netip"
	"strings"

	"github.com/gin-gonic/gin"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"netmon/collectors/geo"
	"netmon/collectors/geo/threat"
)

// ThreatLists gives the current loads of -ioc-file and
// -domain-category-file (the hub's threat.Watch pair); nil values mean
// no file or none loaded yet.
type ThreatLists interface {
	IOC() *threat.List
	Categories() *threat.Categories
}

// geoInfo is the GeoIP layer's lookup with the AS organisation
// (*geo.Geo); GeoLookup implementations without it answer no org.
type geoInfo interface {
	Info(addr netip.Addr) (geo.Info, bool)
}

type lookupIn struct {
	IP     string `query:"ip" doc:"an IPv4 or IPv6 address"`
	Domain string `query:"domain" doc:"a domain name (IDN in Unicode or punycode; case and a trailing dot do not matter)"`
}

func (in *lookupIn) parse() (netip.Addr, error) {
	if in.IP == "" && in.Domain == "" {
		return netip.Addr{}, invalidField("ip", "give query parameter \"ip\" or \"domain\" (or both)")
	}
	if in.IP == "" {
		return netip.Addr{}, nil
	}
	a, err := netip.ParseAddr(in.IP)
	if err != nil {
		return a, invalidField("ip", "query parameter \"ip\" is not an IP address")
	}
	return a.Unmap(), nil
}

// Enrichment is the body of GET /api/v1/enrich.
type Enrichment struct {
	IP      string `json:"ip,omitempty"`
	Country string `json:"country,omitempty" jsonschema_description:"ISO 3166-1 alpha-2 from the GeoIP layer; empty when unknown"`
	ASN     string `json:"asn,omitempty" jsonschema_description:"e.g. AS15169"`
	Org     string `json:"org,omitempty" jsonschema_description:"the AS organisation (mmdb source only)"`
	Private bool   `json:"private" jsonschema_description:"true for addresses that are not globally routable (RFC 1918, loopback, link-local, ULA, CGNAT, documentation...); they are never looked up"`
	// GeoSource is where the answer came from: mmdb, online or none.
	GeoSource string `json:"geo_source,omitempty"`

	Domain       string `json:"domain,omitempty" jsonschema_description:"as given"`
	Normalised   string `json:"normalised,omitempty" jsonschema_description:"lower case, no trailing dot, IDN as punycode (IDNA2008 lookup profile)"`
	Registrable  string `json:"registrable,omitempty" jsonschema_description:"eTLD+1 from the public suffix list (golang.org/x/net/publicsuffix); empty when the name is itself a public suffix"`
	PublicSuffix string `json:"public_suffix,omitempty"`
	// ICANN is true when the public suffix is an ICANN one (false for
	// private suffixes such as github.io).
	ICANN    bool   `json:"icann,omitempty"`
	Category string `json:"category,omitempty" jsonschema_description:"from -domain-category-file (the nearest listed parent's); empty when none"`
}

// normaliseDomain lowercases, drops a trailing dot and converts an IDN
// to punycode; ok is false for what is not a valid name.
func normaliseDomain(d string) (string, bool) {
	d = strings.TrimSuffix(strings.TrimSpace(d), ".")
	n, err := idna.Lookup.ToASCII(d)
	// The lookup profile lets empty labels through; a name has none.
	if err != nil || n == "" || strings.HasPrefix(n, ".") || strings.Contains(n, "..") {
		return "", false
	}
	return n, true
}

func (s *Server) enrich(c *gin.Context, in *lookupIn) (Enrichment, error) {
	a, err := in.parse()
	if err != nil {
		return Enrichment{}, err
	}
	var out Enrichment
	if a.IsValid() {
		out.IP = a.String()
		out.Private = !threat.GlobalAddr(a)
		if s.deps.Geo != nil {
			out.GeoSource = s.deps.Geo.Source()
			if gi, ok := s.deps.Geo.(geoInfo); ok {
				if info, ok := gi.Info(a); ok {
					out.Country, out.ASN, out.Org = info.Country, info.ASN, info.Org
				}
			} else if country, asn, ok := s.deps.Geo.Lookup(a); ok {
				out.Country, out.ASN = country, asn
			}
		}
	}
	if in.Domain != "" {
		out.Domain = in.Domain
		n, ok := normaliseDomain(in.Domain)
		if !ok {
			return Enrichment{}, invalidField("domain", "query parameter \"domain\" is not a valid domain name")
		}
		out.Normalised = n
		out.PublicSuffix, out.ICANN = publicsuffix.PublicSuffix(n)
		if r, err := publicsuffix.EffectiveTLDPlusOne(n); err == nil {
			out.Registrable = r
		}
		if s.deps.Threats != nil {
			out.Category, _ = s.deps.Threats.Categories().Category(n)
		}
	}
	return out, nil
}

// Decision is what decided a reputation.
type Decision struct {
	// Source is ioc_list (-ioc-file), category_list
	// (-domain-category-file, category "trusted"), capture_dns (the hub
	// capture saw a listed domain resolve to the address) or builtin (a
	// non-global address).
	Source string `json:"source" jsonschema:"enum=ioc_list,enum=category_list,enum=capture_dns,enum=builtin"`
	// Subject is the ip or domain this decision is about.
	Subject string `json:"subject"`
	// Entry is the listed name or address that matched (a parent domain
	// matches its subdomains).
	Entry string `json:"entry"`
	// List is the file; Line its 1-based line (0 for builtin).
	List string `json:"list,omitempty"`
	Line int    `json:"line"`
}

// ThreatIntel is the body of GET /api/v1/threatintel.
type ThreatIntel struct {
	IP         string `json:"ip,omitempty"`
	Domain     string `json:"domain,omitempty" jsonschema_description:"normalised"`
	Reputation string `json:"reputation" jsonschema:"enum=trusted,enum=unknown,enum=suspicious,enum=malicious"`
	// DecidedBy is absent for unknown.
	DecidedBy *Decision `json:"decided_by,omitempty"`
	// List describes the threat list in force (absent without -ioc-file
	// or before its first good load).
	List *ListInfo `json:"list,omitempty"`
}

// ListInfo is the threat list in force and what its file held.
type ListInfo struct {
	Path string `json:"path"`
	threat.Stats
}

func (s *Server) threatIntel(c *gin.Context, in *lookupIn) (ThreatIntel, error) {
	a, err := in.parse()
	if err != nil {
		return ThreatIntel{}, err
	}
	var out ThreatIntel
	if in.Domain != "" {
		n, ok := normaliseDomain(in.Domain)
		if !ok {
			return ThreatIntel{}, invalidField("domain", "query parameter \"domain\" is not a valid domain name")
		}
		out.Domain = n
	}
	if a.IsValid() {
		out.IP = a.String()
	}
	var l *threat.List
	var cats *threat.Categories
	if s.deps.Threats != nil {
		l, cats = s.deps.Threats.IOC(), s.deps.Threats.Categories()
	}
	if l != nil {
		out.List = &ListInfo{Path: l.Path, Stats: l.Stats}
	}
	v := threat.Decide(l, cats, out.Domain, a, s.resolved(l))
	out.Reputation = v.Reputation
	if v.DecidedBy != nil {
		d := Decision(*v.DecidedBy)
		out.DecidedBy = &d
	}
	return out, nil
}

// resolved is what the hub capture saw resolve (its DNS answers of the
// busiest domains), read only when there is a list to match them with.
func (s *Server) resolved(l *threat.List) []threat.Resolved {
	if l == nil || s.deps.Capture == nil {
		return nil
	}
	var out []threat.Resolved
	for _, d := range s.deps.Capture.Snapshot().TopDomains {
		out = append(out, threat.Resolved{Domain: d.Domain, IPs: d.IPs})
	}
	return out
}
