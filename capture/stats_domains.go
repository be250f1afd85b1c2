package capture

import (
	"net/netip"

	"netmon/capture/decode"
)

// domainTable is the bounded DNS domain table: at most limits.domains
// names (spec: 4096), the least recently seen evicted first. Slots live
// in a fixed slab linked in recency order, so lookups, updates and
// evictions allocate nothing; only a name never seen before costs one
// string.
type domainTable struct {
	index map[string]int32
	slots []domainSlot
	head  int32 // most recently seen, -1 when empty
	tail  int32 // least recently seen
	max   int
}

type domainSlot struct {
	name      string
	queries   int64
	responses int64
	ips       [4]netip.Addr
	nips      uint8
	prev      int32
	next      int32
}

func (t *domainTable) init(size int) {
	t.max = size
	t.index = make(map[string]int32, 256)
	t.slots = make([]domainSlot, 0, size)
	t.reset()
}

func (t *domainTable) reset() {
	clear(t.index)
	t.slots = t.slots[:0]
	t.head, t.tail = -1, -1
}

// touch returns the slot of name, adding it (and evicting the least
// recently seen when full), and marks it most recently seen.
func (t *domainTable) touch(name []byte, evicted *int64) *domainSlot {
	if i, ok := t.index[string(name)]; ok {
		t.unlink(i)
		t.pushFront(i)
		return &t.slots[i]
	}
	var i int32
	if len(t.slots) < t.max {
		i = int32(len(t.slots))
		t.slots = append(t.slots, domainSlot{})
	} else {
		i = t.tail
		t.unlink(i)
		delete(t.index, t.slots[i].name)
		*evicted++
	}
	t.slots[i] = domainSlot{name: string(name)}
	t.index[t.slots[i].name] = i
	t.pushFront(i)
	return &t.slots[i]
}

// lookup returns the slot of name without touching it, or nil.
func (t *domainTable) lookup(name []byte) *domainSlot {
	if i, ok := t.index[string(name)]; ok {
		return &t.slots[i]
	}
	return nil
}

func (t *domainTable) unlink(i int32) {
	s := &t.slots[i]
	if s.prev >= 0 {
		t.slots[s.prev].next = s.next
	} else {
		t.head = s.next
	}
	if s.next >= 0 {
		t.slots[s.next].prev = s.prev
	} else {
		t.tail = s.prev
	}
	s.prev, s.next = -1, -1
}

func (t *domainTable) pushFront(i int32) {
	s := &t.slots[i]
	s.prev, s.next = -1, t.head
	if t.head >= 0 {
		t.slots[t.head].prev = i
	}
	t.head = i
	if t.tail < 0 {
		t.tail = i
	}
}

// addIP adds a to the slot's addresses unless present or the slot holds
// limit already (the first addresses seen are kept).
func (d *domainSlot) addIP(a netip.Addr, limit int) {
	limit = min(limit, len(d.ips))
	for _, x := range d.ips[:d.nips] {
		if x == a {
			return
		}
	}
	if int(d.nips) < limit {
		d.ips[d.nips] = a
		d.nips++
	}
}

// trackedName reports whether a DNS name goes into the domain table:
// reverse-mapping names (in-addr.arpa, ip6.arpa), multicast-DNS names
// (.local) and dotless names (single labels, search-list probes, the root)
// are left out. The name is kept byte for byte otherwise, whatever it
// holds: escaping is the renderer's job.
func trackedName(name []byte) bool {
	if decode.IsReverse(name) || decode.IsLocal(name) {
		return false
	}
	for _, b := range name {
		if b == '.' {
			return true
		}
	}
	return false
}

// maxChain bounds the CNAME chain followed from a question to its
// addresses.
const maxChain = 8

// recordDNS updates the domain table and the IP-to-name map from a parsed
// DNS message. Standard queries (opcode 0) only.
//
// Each question name counts one query (QR=0) or one response (QR=1). The
// A and AAAA answers of a response belong to the question whose name, or
// a name of its CNAME chain (at most 8 links), owns them: they are added to
// that question's domain (at most 4 addresses) and map the address to the
// question name, the name the client asked for rather than a CDN alias.
// Addresses not reached from a question map to their own owner name.
func (s *stats) recordDNS(m *decode.DNSMessage) {
	if m.Opcode != 0 {
		return
	}
	var slots [decode.MaxQuestions]*domainSlot
	for qi, q := range m.Questions {
		if !trackedName(q.Name) {
			continue
		}
		d := s.domains.touch(q.Name, &s.counters.DomainsEvicted)
		if m.Response {
			d.responses++
		} else {
			d.queries++
		}
		slots[qi] = d
	}
	if !m.Response || len(m.Answers) == 0 {
		return
	}
	// A question's slot may have been evicted by a later question of the
	// same message (only with a table smaller than the question count).
	for qi := range m.Questions {
		if slots[qi] != nil && slots[qi].name != string(m.Questions[qi].Name) {
			slots[qi] = nil
		}
	}

	var claimed [decode.MaxAnswers]bool
	for qi, q := range m.Questions {
		var chain [maxChain + 1][]byte
		chain[0] = q.Name
		n := 1
		for n < len(chain) {
			next := -1
			for ai, a := range m.Answers {
				if a.Type == decode.TypeCNAME && string(a.Name) == string(chain[n-1]) {
					next = ai
					break
				}
			}
			if next < 0 {
				break
			}
			chain[n] = m.Answers[next].Target
			n++
		}
		for ai, a := range m.Answers {
			if a.Type == decode.TypeCNAME || claimed[ai] {
				continue
			}
			for _, c := range chain[:n] {
				if string(a.Name) == string(c) {
					claimed[ai] = true
					if slots[qi] != nil {
						slots[qi].addIP(a.Addr, s.lim.domainIPs)
					}
					s.setHostname(a.Addr, q.Name, slots[qi])
					break
				}
			}
		}
	}
	for ai, a := range m.Answers {
		if a.Type != decode.TypeCNAME && !claimed[ai] {
			s.setHostname(a.Addr, a.Name, s.domains.lookup(a.Name))
		}
	}
}

// setHostname maps addr to name (the latest name wins). slot, when it
// holds the same name, lends its string so no allocation is needed. When
// the map is full (limits.hostnames) an arbitrary entry, in Go's
// randomised map order, makes room.
func (s *stats) setHostname(addr netip.Addr, name []byte, slot *domainSlot) {
	if len(name) == 0 || !addr.IsValid() {
		return
	}
	addr = addr.Unmap()
	old, ok := s.hostnames[addr]
	if ok && old == string(name) {
		return
	}
	if !ok && len(s.hostnames) >= s.lim.hostnames {
		for k := range s.hostnames {
			delete(s.hostnames, k)
			break
		}
	}
	if slot != nil && slot.name == string(name) {
		s.hostnames[addr] = slot.name
	} else {
		s.hostnames[addr] = string(name)
	}
}

// topDomains returns the n domains with the most queries+responses, most
// first, ties by name.
func (s *stats) topDomains(n int) []Domain {
	worse := func(a, b *domainSlot) bool {
		if ta, tb := a.queries+a.responses, b.queries+b.responses; ta != tb {
			return ta < tb
		}
		return a.name > b.name
	}
	top := make([]*domainSlot, 0, n+1)
	for i := range s.domains.slots {
		top = pushTop(top, &s.domains.slots[i], n, worse)
	}
	sortBest(top, worse)
	out := make([]Domain, 0, len(top))
	for _, d := range top {
		ips := make([]string, 0, d.nips)
		for _, a := range d.ips[:d.nips] {
			ips = append(ips, a.String())
		}
		out = append(out, Domain{Domain: d.name, Queries: d.queries, Responses: d.responses, IPs: ips})
	}
	return out
}
