// Package prompt turns netmon facts into the text sent to a language
// model, safely (spec 1 capability 9, 2.8, 8; issue 32): the addresses,
// MACs, user names and host names of the customer's network are replaced
// by stable per-conversation tokens (Pseudonyms), every untrusted string
// is quoted as data inside a fence the data cannot forge (Quote), and the
// facts are assembled within the context budget with the exact bytes and
// their SHA-256 for the audit record (Build). It reads no store and
// serves no route; the conversation service hands it facts.
//
// What is pseudonymised (kind → token):
//
//	ip    every IPv4 address found in text (also with a port, inside a
//	      word, in reverse-DNS names), except 0.0.0.0, 127/8 and the
//	      netmasks 255.x (contiguous masks identify nothing)
//	ip6   every IPv6 address in any textual form (compressed, upper case,
//	      embedded IPv4 such as ::ffff:192.0.2.1, zone ids fe80::1%eth0),
//	      except :: and ::1
//	mac   EUI-48 in colon, dash and Cisco dot forms
//	user  the user names the caller registers (AddUser)
//	host  the host names and FQDNs the caller registers (AddHost), any
//	      dotted name with a registered host as one of its labels, any
//	      name under a registered domain (AddDomain) or under a private
//	      suffix (.local, .lan, .internal, .corp, .home.arpa, …), and an
//	      address glued to letters (abc10.0.0.1) taken whole
//	tok   text that already looks like a token (ip-3 in a syslog line),
//	      so Reveal can never confuse it with a real one
//
// What is NOT pseudonymised, and why: port numbers, protocol names,
// process names and paths, interface names outside a zone id, counters
// and times (they describe behaviour, not whose network it is, and the
// model needs them); public domain names not registered as the
// customer's (google.com, a CDN, a suspicious domain: the model must
// see them to judge them, and they identify the service, not the
// customer) — which is why the caller must register its own domains;
// a host name that is neither registered nor under a registered or
// private suffix (the package cannot tell "db-01" from "nginx" without
// the inventory: the context builder registers every agent, device and
// user name it knows); SNMP OIDs and version strings that do not parse
// as an address. Known names match whole dotted labels, case-insensitively:
// "db-01-backup" is not "db-01".
package prompt

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The token kinds.
const (
	KindIP   = "ip"
	KindIP6  = "ip6"
	KindMAC  = "mac"
	KindUser = "user"
	KindHost = "host"
	// KindTok escapes text that already looks like a token.
	KindTok = "tok"
)

// kinds in the order Reveal tries their prefixes (ip6- before ip-).
var tokenKinds = []string{KindIP6, KindIP, KindMAC, KindUser, KindHost, KindTok}

// privateSuffixes are the DNS suffixes that only ever name something
// inside a customer's network (RFC 6761/6762/8375 and common practice).
var privateSuffixes = []string{"local", "lan", "internal", "intranet", "corp", "home", "home.arpa", "localdomain", "private", "localhost"}

// Pseudonyms is one conversation's map between real values and tokens.
// The same value always gets the same token; distinct values get
// distinct tokens; the map is stored with the conversation (JSON) so
// later turns and the console's Reveal agree. Safe for concurrent use.
type Pseudonyms struct {
	mu      sync.Mutex
	byKey   map[tokKey]tokEntry // (kind, canonical value) → token
	byToken map[string]string   // token → the value as first seen
	kindOf  map[string]string   // token → kind
	next    map[string]int
	names   map[string]string // lower-case registered name → kind
	domains map[string]bool   // lower-case registered domain suffixes
	// nameLens and domainLens mark the lengths present (capped at 255),
	// so the scanner skips most map lookups for ordinary words.
	nameLens, domainLens lengthSet
	order                []string // tokens in the order given
	// aliases counts values met again under another spelling (upper
	// case, another MAC form): Reveal gives back the first spelling.
	aliases int
}

// New returns an empty map with the private suffixes registered.
func New() *Pseudonyms {
	p := &Pseudonyms{
		byKey: map[tokKey]tokEntry{}, byToken: map[string]string{}, kindOf: map[string]string{},
		next: map[string]int{}, names: map[string]string{}, domains: map[string]bool{},
	}
	for _, s := range privateSuffixes {
		p.domains[s] = true
		p.domainLens.add(len(s))
	}
	return p
}

type tokKey struct{ kind, key string }

type tokEntry struct{ token, first string }

// lengthSet is a bitmap of lengths 0–255 (longer ones share bit 255).
type lengthSet [4]uint64

func (l *lengthSet) add(n int) { n = min(n, 255); l[n>>6] |= 1 << (n & 63) }

func (l *lengthSet) has(n int) bool { n = min(n, 255); return l[n>>6]&(1<<(n&63)) != 0 }

// AddHost registers host names or FQDNs of the customer's network.
func (p *Pseudonyms) AddHost(names ...string) { p.addNames(KindHost, names) }

// AddUser registers user names.
func (p *Pseudonyms) AddUser(names ...string) { p.addNames(KindUser, names) }

// AddDomain registers the customer's DNS domains (corp.example): every
// name under them is a host.
func (p *Pseudonyms) AddDomain(domains ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range domains {
		d = strings.Trim(strings.ToLower(d), ".")
		if d != "" {
			p.domains[d] = true
			p.domainLens.add(len(d))
		}
	}
}

func (p *Pseudonyms) addNames(kind string, names []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range names {
		n = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(n)), ".")
		if n == "" || !isNameRun(n) {
			continue // not a single name token: it could not be found in text
		}
		if _, ok := p.names[n]; !ok {
			p.names[n] = kind
			p.nameLens.add(len(n))
		}
	}
}

// Mark pseudonymises a whole value the caller knows to be a host or
// user name (a device's sysName, an agent's host name), whatever it
// looks like: a single name is also registered, so it is found in
// other text too; a value with spaces or other bytes gets a token for
// the exact (cleaned) text. Kinds other than host and user are treated
// as host.
func (p *Pseudonyms) Mark(kind, value string) string {
	if kind != KindUser {
		kind = KindHost
	}
	v := strings.TrimSpace(value)
	if v == "" {
		return value
	}
	p.addNames(kind, []string{v})
	p.mu.Lock()
	defer p.mu.Unlock()
	key := strings.ToLower(strings.TrimSuffix(v, "."))
	if !isNameRun(key) {
		key = v
	}
	return p.token(kind, key, v)
}

func isNameRun(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

// token returns the token for value of kind, keyed by key (its canonical
// form), giving a new one the first time. Callers hold p.mu.
func (p *Pseudonyms) token(kind, key, value string) string {
	k := tokKey{kind, key}
	if e, ok := p.byKey[k]; ok {
		if e.first != value {
			p.aliases++
		}
		return e.token
	}
	p.next[kind]++
	t := kind + "-" + strconv.Itoa(p.next[kind])
	p.byKey[k] = tokEntry{t, value}
	p.byToken[t] = value
	p.kindOf[t] = kind
	p.order = append(p.order, t)
	return t
}

// Token returns the token a value got in this conversation, if any.
func (p *Pseudonyms) Token(kind, value string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := value
	switch kind {
	case KindIP, KindIP6:
		if a, err := netip.ParseAddr(value); err == nil {
			key = a.String()
		}
	case KindMAC:
		if m, ok := parseMAC(value); ok {
			key = m
		}
	case KindUser, KindHost:
		key = strings.ToLower(value)
	}
	e, ok := p.byKey[tokKey{kind, key}]
	return e.token, ok
}

// Mapping is one token and the value it stands for.
type Mapping struct {
	Token string `json:"token"`
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// Mappings lists the tokens given so far, in order (for the console).
func (p *Pseudonyms) Mappings() []Mapping {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Mapping, 0, len(p.order))
	for _, t := range p.order {
		out = append(out, Mapping{Token: t, Kind: p.kindOf[t], Value: p.byToken[t]})
	}
	return out
}

// Pseudonymise replaces every value of the kinds above in text by its
// token. Text that already looks like a token is escaped as tok-N, so
// Reveal(Pseudonymise(s)) == s whenever each value appears in s under
// one spelling (2001:db8::1 and 2001:DB8::1 share a token, and Reveal
// gives back the first spelling seen).
func (p *Pseudonyms) Pseudonymise(text string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := scanner{p: p, src: text}
	s.run()
	if !s.changed {
		return text
	}
	return string(s.out)
}

// Reveal maps the tokens in text (a model's answer) back to the values;
// tokens this conversation never gave are left as they are. For the
// console only: revealed text never goes back to a provider.
func (p *Pseudonyms) Reveal(text string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); i++ {
		if i > 0 && isWordByte(text[i-1]) {
			continue
		}
		end, ok := matchToken(text, i)
		if !ok {
			continue
		}
		v, known := p.byToken[text[i:end]]
		if !known {
			i = end - 1
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(text))
		}
		b.WriteString(text[last:i])
		b.WriteString(v)
		last = end
		i = end - 1
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// matchToken reports the end of a token-looking string at i: a kind,
// "-", digits, then no word byte. The caller checks the left boundary.
func matchToken(s string, i int) (int, bool) {
	if c := s[i]; c != 'i' && c != 'm' && c != 'u' && c != 'h' && c != 't' {
		return 0, false
	}
	for _, k := range tokenKinds {
		if !strings.HasPrefix(s[i:], k) || i+len(k)+1 >= len(s) || s[i+len(k)] != '-' {
			continue
		}
		j := i + len(k) + 1
		d := j
		for d < len(s) && s[d] >= '0' && s[d] <= '9' {
			d++
		}
		if d == j || (d < len(s) && isWordByte(s[d])) {
			return 0, false
		}
		return d, true
	}
	return 0, false
}

// pseudonymsJSON is the stored form.
type pseudonymsJSON struct {
	Version int       `json:"version"`
	Entries []entry   `json:"entries"`
	Names   []Mapping `json:"names,omitempty"`
	Domains []string  `json:"domains,omitempty"`
}

type entry struct {
	Token string `json:"token"`
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MarshalJSON stores the map: tokens with their canonical keys and first
// spellings, and the registered names and domains.
func (p *Pseudonyms) MarshalJSON() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := pseudonymsJSON{Version: 1, Entries: make([]entry, 0, len(p.order))}
	keyOf := make(map[string]string, len(p.byKey))
	for k, e := range p.byKey {
		keyOf[e.token] = k.key
	}
	for _, t := range p.order {
		out.Entries = append(out.Entries, entry{Token: t, Key: keyOf[t], Value: p.byToken[t]})
	}
	for n, k := range p.names {
		out.Names = append(out.Names, Mapping{Kind: k, Value: n})
	}
	sort.Slice(out.Names, func(i, j int) bool { return out.Names[i].Value < out.Names[j].Value })
	for d := range p.domains {
		out.Domains = append(out.Domains, d)
	}
	sort.Strings(out.Domains)
	return json.Marshal(out)
}

// UnmarshalJSON restores a stored map; new tokens continue its numbering.
func (p *Pseudonyms) UnmarshalJSON(b []byte) error {
	var in pseudonymsJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("decode pseudonyms: %w", err)
	}
	if in.Version != 1 {
		return fmt.Errorf("decode pseudonyms: version %d", in.Version)
	}
	q := New()
	q.domains = map[string]bool{}
	for _, e := range in.Entries {
		kind, n, ok := splitToken(e.Token)
		if !ok {
			return fmt.Errorf("decode pseudonyms: bad token %q", e.Token)
		}
		if _, dup := q.byToken[e.Token]; dup {
			return fmt.Errorf("decode pseudonyms: token %q twice", e.Token)
		}
		q.byKey[tokKey{kind, e.Key}] = tokEntry{e.Token, e.Value}
		q.byToken[e.Token] = e.Value
		q.kindOf[e.Token] = kind
		q.order = append(q.order, e.Token)
		if n > q.next[kind] {
			q.next[kind] = n
		}
	}
	for _, m := range in.Names {
		if m.Kind == KindHost || m.Kind == KindUser {
			q.names[m.Value] = m.Kind
			q.nameLens.add(len(m.Value))
		}
	}
	for _, d := range in.Domains {
		q.domains[d] = true
		q.domainLens.add(len(d))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.byKey, p.byToken, p.kindOf, p.next, p.names, p.domains, p.order =
		q.byKey, q.byToken, q.kindOf, q.next, q.names, q.domains, q.order
	p.nameLens, p.domainLens, p.aliases = q.nameLens, q.domainLens, 0
	return nil
}

func splitToken(t string) (kind string, n int, ok bool) {
	end, ok := matchToken(t, 0)
	if !ok || end != len(t) {
		return "", 0, false
	}
	i := strings.LastIndexByte(t, '-')
	n, err := strconv.Atoi(t[i+1:])
	return t[:i], n, err == nil && n > 0
}
