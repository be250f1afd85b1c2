// Package flowagg sums flow records into exporter minutes in memory, the
// first half of the flow store's write path (issue 16): each exporter's
// minute is summed here and handed back once, when it closes, as a bounded
// set of rows for the store to append in one transaction. It sits between
// the ingest queue (store/queue, which owns one Aggregator per writer) and
// the store (store.DB.WriteFlowMinutes); it imports only store/record.
// Peek shows the open minutes as they will be written, for the flow
// reads (issue 28: a flow is readable before its minute closes).
//
// Bounds: a closed minute keeps Config.MinuteRows 5-tuples in detail (the
// most octets) and sums the rest into one "other" row per protocol, so
// every total stays exact; the 5-tuples held in memory over all open
// minutes are bounded by Config.MaxKeys, beyond which new 5-tuples go
// straight to their minute's other row (a scan sheds detail, not memory
// and not flows).
package flowagg

import (
	"bytes"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"netmon/store/record"
)

// KeyBytes is the memory one held 5-tuple costs, an estimate
// (map slot, its share of empty slots, sums) behind
// netmon_flow_aggregation_bytes.
const KeyBytes = 128

// Sum is one stored row of a minute or an hour: a 5-tuple's sums, or,
// with Other set, the remainder of one protocol whose detail was cut
// (addresses invalid, ports zero).
type Sum struct {
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16
	Proto            uint8
	Other            bool
	Packets, Octets  uint64
	Flows            uint64 // flow records summed
	First, Last      int64  // earliest and latest record time
}

// Minute is one exporter's closed minute, ready to be written once.
type Minute struct {
	Exporter netip.Addr
	TS       int64 // the minute's start, Unix seconds
	// Records is how many flow records it sums (what the ingest queue
	// counts written once it commits).
	Records int64
	// Rows: the detail rows sorted by 5-tuple, then the other rows.
	Rows []Sum
}

// tupleKey is a 5-tuple in a fixed 37 bytes with no pointer, so the maps
// of millions of keys cost the garbage collector nothing to scan. IPv4
// addresses are kept IPv4-mapped and unmapped again when written.
type tupleKey struct {
	src, dst         [16]byte
	srcPort, dstPort uint16
	proto            uint8
}

// key4 is an IPv4 5-tuple in 16 bytes (addresses, then ports and
// protocol): most flows are IPv4, and a smaller key is a denser map, so
// fewer cache misses per record at a million keys.
type key4 struct{ addrs, rest uint64 }

func (k key4) tuple() tupleKey {
	a := netip.AddrFrom4([4]byte{byte(k.addrs >> 56), byte(k.addrs >> 48), byte(k.addrs >> 40), byte(k.addrs >> 32)})
	b := netip.AddrFrom4([4]byte{byte(k.addrs >> 24), byte(k.addrs >> 16), byte(k.addrs >> 8), byte(k.addrs)})
	return tupleKey{src: a.As16(), dst: b.As16(), srcPort: uint16(k.rest >> 24), dstPort: uint16(k.rest >> 8), proto: uint8(k.rest)}
}

type tupleSums struct {
	packets, octets, flows uint64
	first, last            int64
}

func (s *tupleSums) add(f *record.Flow) {
	if s.flows == 0 || f.TS < s.first {
		s.first = f.TS
	}
	s.last = max(s.last, f.TS)
	s.packets += f.Packets
	s.octets += f.Octets
	s.flows++
}

func (s *tupleSums) merge(o *tupleSums) {
	if o.flows == 0 {
		return
	}
	if s.flows == 0 || o.first < s.first {
		s.first = o.first
	}
	s.last = max(s.last, o.last)
	s.packets += o.packets
	s.octets += o.octets
	s.flows += o.flows
}

type protoSums struct {
	proto uint8
	tupleSums
}

// otherOf returns the remainder of protocol p, added on first use.
func (b *bucket) otherOf(p uint8) *tupleSums {
	for i := range b.other {
		if b.other[i].proto == p {
			return &b.other[i].tupleSums
		}
	}
	b.other = append(b.other, protoSums{proto: p})
	return &b.other[len(b.other)-1].tupleSums
}

type minuteID struct {
	exporter netip.Addr
	ts       int64
}

// bucket is one open exporter minute.
type bucket struct {
	id       minuteID
	deadline int64               // Unix seconds after which it closes
	index4   map[key4]uint32     // IPv4 5-tuples -> sums
	index    map[tupleKey]uint32 // the others (IPv6, mixed)
	sums     []tupleSums
	other    []protoSums // the remainder, one per protocol seen (few)
	keyed    bool        // holds a key of the bound for itself
	overflow bool        // no exporter, no detail: see Aggregator.bucket
	records  int64
}

// Aggregator sums flow records into open exporter minutes and hands
// back the minutes that closed. It is not safe for concurrent use: the
// ingest queue gives each writer its own, and routes each exporter to one
// writer, so a minute is summed in one place.
type Aggregator struct {
	cfg     Config
	keys    *atomic.Int64 // held over all aggregators sharing it
	records *atomic.Int64 // records held in open minutes, likewise
	folded  atomic.Int64  // records summed into "other" for want of keys
	open    map[minuteID]*bucket
	last    *bucket
	hint    map[netip.Addr]int // an exporter's last minute size, to presize
	// overflows counts the open overflow minutes.
	overflows int
}

// New returns an aggregator counting its held keys and
// records into keys and records (shared between aggregators so the bound
// is global; nil for private counters).
func New(cfg Config, keys, records *atomic.Int64) *Aggregator {
	d := DefaultConfig()
	if cfg.MinuteRows <= 0 {
		cfg.MinuteRows = d.MinuteRows
	}
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = d.MaxKeys
	}
	if cfg.Grace <= 0 {
		cfg.Grace = d.Grace
	}
	if keys == nil {
		keys = new(atomic.Int64)
	}
	if records == nil {
		records = new(atomic.Int64)
	}
	return &Aggregator{cfg: cfg, keys: keys, records: records, open: map[minuteID]*bucket{}, hint: map[netip.Addr]int{}}
}

// Folded returns how many records were summed into "other" rows because
// the key bound was reached (not counting those cut by MinuteRows).
func (a *Aggregator) Folded() int64 { return a.folded.Load() }

// Add sums fs into their minutes; now decides when a new minute closes.
func (a *Aggregator) Add(fs []record.Flow, now time.Time) {
	unix := now.Unix()
	grace := int64(a.cfg.Grace / time.Second)
	b := a.last
	for i := range fs {
		f := &fs[i]
		ts := f.TS - f.TS%60
		if f.TS < 0 && f.TS%60 != 0 {
			ts -= 60
		}
		if b == nil || b.id.ts != ts || b.id.exporter != f.Exporter {
			b = a.bucket(minuteID{f.Exporter, ts}, unix, grace)
		}
		b.records++
		if b.overflow {
			b.otherOf(f.Proto).add(f)
			continue
		}
		var k4 key4
		var k tupleKey
		v4 := f.Src.Is4() && f.Dst.Is4()
		if v4 {
			s, d := f.Src.As4(), f.Dst.As4()
			k4 = key4{addrs: uint64(s[0])<<56 | uint64(s[1])<<48 | uint64(s[2])<<40 | uint64(s[3])<<32 | uint64(d[0])<<24 | uint64(d[1])<<16 | uint64(d[2])<<8 | uint64(d[3]),
				rest: uint64(f.SrcPort)<<24 | uint64(f.DstPort)<<8 | uint64(f.Proto)}
			if i, ok := b.index4[k4]; ok {
				b.sums[i].add(f)
				continue
			}
		} else {
			k = tupleKey{src: f.Src.As16(), dst: f.Dst.As16(), srcPort: f.SrcPort, dstPort: f.DstPort, proto: f.Proto}
			if i, ok := b.index[k]; ok {
				b.sums[i].add(f)
				continue
			}
		}
		if !a.takeKey() {
			a.folded.Add(1)
			b.otherOf(f.Proto).add(f)
			continue
		}
		if v4 {
			b.index4[k4] = uint32(len(b.sums))
		} else {
			b.index[k] = uint32(len(b.sums))
		}
		b.sums = append(b.sums, tupleSums{})
		b.sums[len(b.sums)-1].add(f)
	}
	a.last = b
	a.records.Add(int64(len(fs)))
}

// maxOverflow bounds the open overflow minutes (see bucket).
const maxOverflow = 4096

// bucket returns the open minute of id, opening it if need be. A minute
// costs a key of the bound like a 5-tuple: when none is left (a flood of
// spoofed exporters), its records go to the minute's overflow bucket,
// which has no exporter and keeps only per-protocol sums; past
// maxOverflow such minutes, to the overflow of the current minute. Memory
// stays bounded and every record is still counted, in some minute.
func (a *Aggregator) bucket(id minuteID, unix, grace int64) *bucket {
	if b := a.open[id]; b != nil {
		return b
	}
	// A current minute closes Grace after its end; a late one (its end
	// long past) Grace after it opened; one in the future (an exporter's
	// clock ahead) a minute after it opened at the latest.
	deadline := min(max(id.ts+60, unix), unix+60) + grace
	if a.takeKey() {
		b := &bucket{id: id, deadline: deadline, keyed: true,
			index4: make(map[key4]uint32, a.hint[id.exporter]), index: map[tupleKey]uint32{}}
		a.open[id] = b
		return b
	}
	id.exporter = netip.Addr{}
	if a.overflows >= maxOverflow {
		id.ts = unix - unix%60
	}
	if b := a.open[id]; b != nil {
		return b
	}
	b := &bucket{id: id, deadline: min(max(id.ts+60, unix), unix+60) + grace, overflow: true}
	a.open[id] = b
	a.overflows++
	return b
}

// takeKey counts one more key held, unless the bound is reached (shared
// with the other aggregators, so never past it even for a moment).
func (a *Aggregator) takeKey() bool {
	for {
		n := a.keys.Load()
		if n >= a.cfg.MaxKeys {
			return false
		}
		if a.keys.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Due removes and returns the minutes closed at now (all of them when all
// is set, at shutdown), oldest first.
func (a *Aggregator) Due(now time.Time, all bool) []Minute {
	unix := now.Unix()
	var out []Minute
	for id, b := range a.open {
		if !all && b.deadline > unix {
			continue
		}
		delete(a.open, id)
		if a.last == b {
			a.last = nil
		}
		out = append(out, a.close(b))
	}
	sortMinutes(out)
	return out
}

// Open returns how many minutes are open.
func (a *Aggregator) Open() int { return len(a.open) }

// close releases a bucket's keys and records from the shared counts and
// turns it into its rows (summary).
func (a *Aggregator) close(b *bucket) Minute {
	n := len(b.index4) + len(b.index)
	held := int64(n)
	if b.keyed {
		held++
	}
	a.keys.Add(-held)
	a.records.Add(-b.records)
	if b.overflow {
		a.overflows--
	}
	// Presize the exporter's next minute like this one: only for big
	// minutes, and for a bounded number of exporters.
	if _, ok := a.hint[b.id.exporter]; (ok || len(a.hint) < maxOverflow) && n >= 1024 {
		a.hint[b.id.exporter] = min(n+n/8, int(a.cfg.MaxKeys))
	}
	return a.summary(b)
}

// Peek returns every open minute as it would be written if it closed now
// (the same detail budget, the same other rows), oldest first, leaving
// them open: what the flow reads merge with the stored minutes so that a
// flow is visible seconds after it arrived, not when its minute closes
// (issue 28). It costs one pass over the open 5-tuples (tens of
// milliseconds at a million), so its caller caches it.
func (a *Aggregator) Peek() []Minute {
	out := make([]Minute, 0, len(a.open))
	for _, b := range a.open {
		out = append(out, a.summary(b))
	}
	sortMinutes(out)
	return out
}

func sortMinutes(ms []Minute) {
	slices.SortFunc(ms, func(x, y Minute) int {
		if x.TS != y.TS {
			return int(x.TS - y.TS)
		}
		return x.Exporter.Compare(y.Exporter)
	})
}

// summary turns a bucket into its rows without changing it: the
// MinuteRows 5-tuples with the most octets in detail (chosen with a
// min-heap, so no copy of a million keys), the rest into the protocol's
// other row.
func (a *Aggregator) summary(b *bucket) Minute {
	n := len(b.index4) + len(b.index)
	// The other rows are summed into a copy: Peek leaves the bucket as
	// it was, to go on summing.
	other := append([]protoSums(nil), b.other...)
	otherOf := func(p uint8) *tupleSums {
		for i := range other {
			if other[i].proto == p {
				return &other[i].tupleSums
			}
		}
		other = append(other, protoSums{proto: p})
		return &other[len(other)-1].tupleSums
	}
	limit := a.cfg.MinuteRows
	type entry struct {
		k tupleKey
		i uint32
	}
	top := make([]entry, 0, min(n, limit))
	less := func(x, y entry) bool { return b.sums[x.i].octets < b.sums[y.i].octets }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(top) {
				return
			}
			if r := l + 1; r < len(top) && less(top[r], top[l]) {
				l = r
			}
			if !less(top[l], top[i]) {
				return
			}
			top[i], top[l] = top[l], top[i]
			i = l
		}
	}
	add := func(e entry) {
		if len(top) < limit {
			top = append(top, e)
			for j := len(top) - 1; j > 0; {
				p := (j - 1) / 2
				if !less(top[j], top[p]) {
					break
				}
				top[j], top[p] = top[p], top[j]
				j = p
			}
			return
		}
		if !less(top[0], e) {
			otherOf(e.k.proto).merge(&b.sums[e.i])
			return
		}
		otherOf(top[0].k.proto).merge(&b.sums[top[0].i])
		top[0] = e
		down(0)
	}
	for k, i := range b.index4 {
		if len(top) == limit && b.sums[i].octets <= b.sums[top[0].i].octets {
			// Not among the biggest: no need to build its full key.
			otherOf(uint8(k.rest)).merge(&b.sums[i])
			continue
		}
		add(entry{k.tuple(), i})
	}
	for k, i := range b.index {
		add(entry{k, i})
	}
	slices.SortFunc(top, func(x, y entry) int {
		if c := bytes.Compare(x.k.src[:], y.k.src[:]); c != 0 {
			return c
		}
		if c := bytes.Compare(x.k.dst[:], y.k.dst[:]); c != 0 {
			return c
		}
		if x.k.srcPort != y.k.srcPort {
			return int(x.k.srcPort) - int(y.k.srcPort)
		}
		if x.k.dstPort != y.k.dstPort {
			return int(x.k.dstPort) - int(y.k.dstPort)
		}
		return int(x.k.proto) - int(y.k.proto)
	})
	m := Minute{Exporter: b.id.exporter, TS: b.id.ts, Records: b.records, Rows: make([]Sum, 0, len(top)+len(other))}
	for _, e := range top {
		s := &b.sums[e.i]
		m.Rows = append(m.Rows, Sum{Src: netip.AddrFrom16(e.k.src).Unmap(), Dst: netip.AddrFrom16(e.k.dst).Unmap(),
			SrcPort: e.k.srcPort, DstPort: e.k.dstPort, Proto: e.k.proto,
			Packets: s.packets, Octets: s.octets, Flows: s.flows, First: s.first, Last: s.last})
	}
	slices.SortFunc(other, func(x, y protoSums) int { return int(x.proto) - int(y.proto) })
	for _, o := range other {
		m.Rows = append(m.Rows, Sum{Proto: o.proto, Other: true, Packets: o.packets, Octets: o.octets, Flows: o.flows, First: o.first, Last: o.last})
	}
	return m
}

// Sums sums records into closed minutes at once, with cfg's
// budget: the direct path of WriteFlows (tests, imports).
func Sums(cfg Config, batches ...[]record.Flow) []Minute {
	a := New(cfg, nil, nil)
	now := time.Now()
	for _, fs := range batches {
		a.Add(fs, now)
	}
	return a.Due(now, true)
}
