package attr

import (
	"net/netip"
	"slices"
	"sync"
	"time"

	"netmon/agentmode/wire"
	"netmon/capture/decode"
)

// maxPrefixes bounds how many flows reassemble their first bytes at once
// (decode.StreamPrefix, 1.5 KiB each): a SYN flood cannot make the agent
// hold more than ~400 KiB of them.
const maxPrefixes = 256

// maxFlowNames bounds the DNS names remembered per flow (a resolver's
// long-lived socket asks many).
const maxFlowNames = 32

// lookupAttempts is how many socket-table reads a new flow gets before it
// is declared unattributable.
const lookupAttempts = 3

// flowKey is one direction-independent flow seen from this host: the
// local and remote ends of a socket.
type flowKey struct {
	proto         uint8
	local, remote netip.AddrPort
}

// owner is who a flow belongs to: a process, or a reason it has none.
type owner struct {
	pid    int32
	name   string
	reason string // "" when pid/name are the owner
}

// flow is one socket's traffic since the last report.
type flow struct {
	in, out, pin, pout uint64
	first, last        time.Time
	owner              owner
	resolved           bool
	attempts           uint8

	// L7: the first bytes of the outgoing stream.
	l7Done bool
	prefix *decode.StreamPrefix
	host   string
	kind   string
	hits   uint64

	dns []dnsCount
}

type dnsCount struct {
	name      string
	queries   uint64
	responses uint64
	// answers are addresses the answers gave (at most maxAnswers), to
	// find the asker through the connection that follows when the
	// query's own socket was gone before it could be looked up.
	answers    []netip.Addr
	answeredAt time.Time
}

// answerWindow is how soon after a DNS answer a connection to one of its
// addresses counts as made by the process that asked.
const answerWindow = 2 * time.Second

// maxAnswers bounds dnsCount.answers.
const maxAnswers = 4

// counter is bytes and packets in both directions.
type counter struct{ in, out, pin, pout uint64 }

// table holds the flows of one backend. The reader goroutine adds packets,
// the lookup goroutine resolves owners, Collect reports and resets; one
// mutex guards it all (the per-packet work under it is a map lookup and a
// few additions).
type table struct {
	cfg Config

	mu       sync.Mutex
	flows    map[flowKey]*flow
	pending  []flowKey // flows created since, or not resolved by, the last lookup
	local    map[netip.Addr]struct{}
	foreign  string // reason for traffic between two other hosts
	unattr   map[string]*counter
	prefixes int
	// lookupWanted is signalled (capacity 1) when a new flow needs an
	// owner; nil in tests that resolve by hand.
	lookupWanted chan struct{}

	dnsMsg  decode.DNSMessage
	hostBuf [decode.MaxHostLen]byte
}

func newTable(cfg Config, foreign string) *table {
	return &table{
		cfg: cfg.withDefaults(), flows: map[flowKey]*flow{}, local: map[netip.Addr]struct{}{},
		foreign: foreign, unattr: map[string]*counter{}, lookupWanted: make(chan struct{}, 1),
	}
}

// setLocal replaces the set of this host's addresses.
func (t *table) setLocal(addrs []netip.Addr) {
	m := make(map[netip.Addr]struct{}, len(addrs))
	for _, a := range addrs {
		m[a.Unmap()] = struct{}{}
	}
	t.mu.Lock()
	t.local = m
	t.mu.Unlock()
}

func (t *table) isLocal(a netip.Addr) bool {
	if a.IsLoopback() {
		return true
	}
	_, ok := t.local[a]
	return ok
}

// add counts one frame. ok and p come from parseFrame; wireLen is the
// frame's length on the wire.
func (t *table) add(p packet, ok bool, wireLen int, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !ok {
		t.addUnattr(wire.ReasonNotIP, false, uint64(wireLen))
		return
	}
	src, dst := p.Src.Addr().Unmap(), p.Dst.Addr().Unmap()
	srcLocal, dstLocal := t.isLocal(src), t.isLocal(dst)
	if (p.Proto != protoTCP && p.Proto != protoUDP) || (p.Src.Port() == 0 && p.Dst.Port() == 0) {
		t.addUnattr(wire.ReasonNotIP, srcLocal && !dstLocal, uint64(p.IPLen))
		return
	}
	if !srcLocal && !dstLocal {
		t.addUnattr(t.foreign, false, uint64(p.PayloadLen))
		return
	}
	srcAP, dstAP := netip.AddrPortFrom(src, p.Src.Port()), netip.AddrPortFrom(dst, p.Dst.Port())
	if srcLocal {
		t.count(flowKey{p.Proto, srcAP, dstAP}, true, p, now)
	}
	if dstLocal {
		t.count(flowKey{p.Proto, dstAP, srcAP}, false, p, now)
	}
}

func (t *table) addUnattr(reason string, out bool, bytes uint64) {
	c := t.unattr[reason]
	if c == nil {
		c = &counter{}
		t.unattr[reason] = c
	}
	if out {
		c.out += bytes
		c.pout++
	} else {
		c.in += bytes
		c.pin++
	}
}

// count adds the packet to the flow k, seen leaving (out) or arriving.
func (t *table) count(k flowKey, out bool, p packet, now time.Time) {
	f := t.flows[k]
	if f == nil {
		if len(t.flows) >= t.cfg.MaxFlows {
			t.addUnattr(wire.ReasonTableFull, out, uint64(p.PayloadLen))
			return
		}
		f = &flow{first: now}
		t.flows[k] = f
		t.pending = append(t.pending, k)
		select {
		case t.lookupWanted <- struct{}{}:
		default:
		}
	}
	f.last = now
	n := uint64(p.PayloadLen)
	if out {
		f.out += n
		f.pout++
	} else {
		f.in += n
		f.pin++
	}
	switch {
	case len(p.Payload) > 0 && k.remote.Port() == 53 && p.Proto == protoUDP:
		t.dns(f, p.Payload, out, now)
	case len(p.Payload) > 0 && k.remote.Port() == 53 && p.Proto == protoTCP:
		// DNS over TCP (answers too big for UDP, some resolvers
		// always): the whole messages of this segment. One split over
		// segments, or cut by the snaplen, is not read (no DNS stream
		// is reassembled); its bytes are still counted.
		for rest := p.Payload; len(rest) > 0; {
			msg, next, err := decode.SplitDNSTCP(rest)
			if err != nil {
				break
			}
			t.dns(f, msg, out, now)
			rest = next
		}
	case p.Proto == protoTCP && out && !f.l7Done && p.PayloadLen > 0:
		t.l7(f, p)
	}
}

// l7 reads the SNI or Host from the first bytes of an outgoing TCP stream,
// reassembling them over segments when the first one is not enough.
func (t *table) l7(f *flow, p packet) {
	truncated := len(p.Payload) < p.PayloadLen
	data := p.Payload
	if f.prefix != nil {
		f.prefix.Add(p.Seq, p.Payload, truncated)
		data = f.prefix.Bytes()
	}
	var host []byte
	var err error
	kind := wire.KindHTTP
	if len(data) > 0 && data[0] == 0x16 {
		kind = wire.KindTLS
		host, err = decode.ParseSNI(data, t.hostBuf[:0])
	} else {
		host, err = decode.ParseHTTPHost(data, t.hostBuf[:0])
	}
	switch {
	case err == nil:
		if f.host != string(host) {
			f.host = string(host)
		}
		f.kind = kind
		f.hits++
		t.endL7(f)
	case err == decode.ErrIncomplete && f.prefix == nil && !truncated && t.prefixes < maxPrefixes:
		f.prefix = new(decode.StreamPrefix)
		t.prefixes++
		f.prefix.Add(p.Seq, p.Payload, false)
	case err == decode.ErrIncomplete && f.prefix != nil && !f.prefix.Closed():
		// wait for the next segment
	default:
		t.endL7(f)
	}
}

func (t *table) endL7(f *flow) {
	f.l7Done = true
	if f.prefix != nil {
		f.prefix = nil
		t.prefixes--
	}
}

// dns counts the reportable question names of a query this host sent
// (out, to port 53) or of an answer it received (from port 53); payload
// is one DNS message.
func (t *table) dns(f *flow, payload []byte, out bool, now time.Time) {
	m := &t.dnsMsg
	if decode.ParseDNS(payload, m) != nil || m.Opcode != 0 || m.Response == out {
		return
	}
	for _, q := range m.Questions {
		if !decode.IsReportable(q.Name) {
			continue
		}
		i := 0
		for i < len(f.dns) && f.dns[i].name != string(q.Name) {
			i++
		}
		if i == len(f.dns) {
			if len(f.dns) == maxFlowNames {
				continue
			}
			f.dns = append(f.dns, dnsCount{name: string(q.Name)})
		}
		d := &f.dns[i]
		if out {
			d.queries++
			continue
		}
		d.responses++
		d.answeredAt = now
		for _, a := range m.Answers {
			if a.Addr.IsValid() && len(d.answers) < maxAnswers && !slices.Contains(d.answers, a.Addr.Unmap()) {
				d.answers = append(d.answers, a.Addr.Unmap())
			}
		}
	}
}

// pendingKeys returns the flows waiting for an owner.
func (t *table) pendingKeys() []flowKey {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]flowKey(nil), t.pending...)
}

// resolve applies one read of the socket tables, made for keys (from
// pendingKeys), to those flows: a flow found gets its owner; one not
// found is retried at the next reads, lookupAttempts in all, then kept as
// unattributed ("socket not found"). Flows that became pending after
// keys were taken wait for the next read.
func (t *table) resolve(keys []flowKey, match func(flowKey) (owner, bool)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	looked := make(map[flowKey]bool, len(keys))
	for _, k := range keys {
		looked[k] = true
	}
	keep := t.pending[:0]
	for _, k := range t.pending {
		f := t.flows[k]
		if f == nil || f.resolved {
			continue
		}
		if !looked[k] {
			keep = append(keep, k)
			continue
		}
		if o, ok := match(k); ok {
			f.owner, f.resolved = o, true
			continue
		}
		f.attempts++
		if f.attempts >= lookupAttempts {
			f.owner, f.resolved = owner{reason: wire.ReasonNoSocket}, true
			continue
		}
		keep = append(keep, k)
	}
	clear(t.pending[len(keep):])
	t.pending = keep
}
