package netflow

import (
	"cmp"
	"net/netip"
	"slices"
	"sync"
)

// exporter holds the templates of one exporter address, all versions and
// observation domains together, so that its bound is per address
// (RELIABILITY.md case 3: a spoofed address flooding template ids evicts
// only its own templates).
type exporter struct {
	mu    sync.RWMutex
	plans map[uint64]entry
	// order lists keys oldest first. A replaced template gets a new seq
	// and a new slot; its old slot turns stale and is skipped, and
	// stale slots are compacted away, so order stays O(limit).
	order []slot
	head  int
	seq   uint64
	// inits is systemInitTimeMilliseconds per IPFIX observation domain,
	// bounded like the templates.
	inits map[uint32]int64
}

type entry struct {
	plan *plan
	seq  uint64
}

type slot struct {
	key, seq uint64
}

// tkey identifies a template within its exporter.
func tkey(version uint16, domain uint32, id uint16) uint64 {
	return uint64(version)<<48 | uint64(domain)<<16 | uint64(id)
}

// lookup returns the exporter's templates, nil if it has none.
func (d *Decoder) lookup(addr netip.Addr) *exporter {
	d.mu.RLock()
	ex := d.exporters[addr]
	d.mu.RUnlock()
	return ex
}

// exporterFor returns the exporter's entry, creating it unless the table
// is full (then nil: new exporters are refused, known ones never evicted).
func (d *Decoder) exporterFor(addr netip.Addr) *exporter {
	if ex := d.lookup(addr); ex != nil {
		return ex
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if ex := d.exporters[addr]; ex != nil {
		return ex
	}
	if len(d.exporters) >= d.cfg.MaxExporters {
		return nil
	}
	ex := &exporter{plans: make(map[uint64]entry), inits: make(map[uint32]int64)}
	d.exporters[addr] = ex
	return ex
}

// learn stores a template from the wire. A re-sent identical template is
// recognised without allocating and changes nothing; a new or different
// one is compiled (outside the lock) and stored.
func (d *Decoder) learn(m *msg, id uint16, spec []byte, n int, options bool, res *Result) error {
	key := tkey(m.version, m.domain, id)
	if m.ex != nil {
		m.ex.mu.RLock()
		old := m.ex.plans[key].plan
		m.ex.mu.RUnlock()
		if old != nil && old.options == options && sameFields(spec, m.version == 10, old.tmpl.Fields) {
			return nil
		}
	}
	p, err := compile(Template{Exporter: m.exporter, Domain: m.domain, ID: id, Version: m.version,
		Options: options, Fields: parseFields(spec, n, m.version == 10)})
	if err != nil {
		return err
	}
	if m.ex == nil {
		if m.ex = d.exporterFor(m.exporter); m.ex == nil {
			res.TemplatesRefused++
			return nil
		}
	}
	m.ex.mu.Lock()
	m.ex.put(key, p, d.cfg.MaxTemplatesPerExporter)
	m.ex.mu.Unlock()
	d.changed.Add(1)
	m.forget()
	return nil
}

// put stores p under key and evicts this exporter's oldest templates past
// limit. The caller holds ex.mu.
func (ex *exporter) put(key uint64, p *plan, limit int) {
	ex.seq++
	ex.plans[key] = entry{plan: p, seq: ex.seq}
	ex.order = append(ex.order, slot{key: key, seq: ex.seq})
	for len(ex.plans) > limit && ex.head < len(ex.order) {
		s := ex.order[ex.head]
		ex.head++
		if e, ok := ex.plans[s.key]; ok && e.seq == s.seq {
			delete(ex.plans, s.key)
		}
	}
	if live := len(ex.order) - ex.head; live > 2*len(ex.plans)+16 || ex.head > live {
		// Drop consumed and stale slots in place.
		kept := ex.order[:0]
		for _, s := range ex.order[ex.head:] {
			if e, ok := ex.plans[s.key]; ok && e.seq == s.seq {
				kept = append(kept, s)
			}
		}
		clear(ex.order[len(kept):])
		ex.order, ex.head = kept, 0
	}
}

// setInit records an IPFIX domain's systemInitTimeMilliseconds.
func (d *Decoder) setInit(m *msg, v int64) {
	m.initMs, m.initLoaded = v, true
	ex := m.ex
	ex.mu.RLock()
	same := ex.inits[m.domain] == v
	ex.mu.RUnlock()
	if same {
		return
	}
	ex.mu.Lock()
	if _, ok := ex.inits[m.domain]; !ok && len(ex.inits) >= d.cfg.MaxTemplatesPerExporter {
		for k := range ex.inits { // drop any one: only this exporter's
			delete(ex.inits, k)
			break
		}
	}
	ex.inits[m.domain] = v
	ex.mu.Unlock()
}

// Templates returns a copy of every cached template, sorted by exporter,
// version, domain and id, for the caller to persist.
func (d *Decoder) Templates() []Template {
	d.mu.RLock()
	exs := make([]*exporter, 0, len(d.exporters))
	for _, ex := range d.exporters {
		exs = append(exs, ex)
	}
	d.mu.RUnlock()
	var ts []Template
	for _, ex := range exs {
		ex.mu.RLock()
		for _, e := range ex.plans {
			t := e.plan.tmpl
			t.Fields = slices.Clone(t.Fields)
			ts = append(ts, t)
		}
		ex.mu.RUnlock()
	}
	slices.SortFunc(ts, func(a, b Template) int {
		return cmp.Or(a.Exporter.Compare(b.Exporter), cmp.Compare(a.Version, b.Version),
			cmp.Compare(a.Domain, b.Domain), cmp.Compare(a.ID, b.ID))
	})
	return ts
}

// LoadTemplates adds persisted templates, typically at start before any
// datagram, so that data sets decode at once. Templates that would not
// compile (wrong version, id below 256, bad fields) are skipped, as are
// exporters past MaxExporters; per-exporter bounds apply as for templates
// from the wire. Loading does not move TemplatesChanged.
//
// An IPFIX exporter's systemInitTimeMilliseconds (options data) is not
// part of a template and is not restored: until the exporter sends it
// again, flows timed in uptime (softflowd's) carry the export time.
func (d *Decoder) LoadTemplates(ts []Template) {
	for _, t := range ts {
		if (t.Version != 9 && t.Version != 10) || t.ID < firstDataSetID {
			continue
		}
		t.Exporter = t.Exporter.Unmap()
		t.Fields = slices.Clone(t.Fields)
		p, err := compile(t)
		if err != nil {
			continue
		}
		ex := d.exporterFor(t.Exporter)
		if ex == nil {
			continue
		}
		ex.mu.Lock()
		ex.put(tkey(t.Version, t.Domain, t.ID), p, d.cfg.MaxTemplatesPerExporter)
		ex.mu.Unlock()
	}
}
