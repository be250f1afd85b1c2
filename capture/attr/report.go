package attr

import (
	"cmp"
	"net/netip"
	"slices"
	"time"

	"netmon/agentmode/wire"
)

type procKey struct {
	name string
	pid  int32
}

type remoteKey struct {
	proto uint8
	ap    string
}

type l7Key struct {
	host, kind string
	proc       procKey
}

type dnsKey struct {
	domain string
	proc   procKey
}

// report turns the counters since the last report into a Report, resets
// them and forgets flows idle for longer than FlowIdle.
func (t *table) report(now time.Time) Report {
	t.mu.Lock()
	defer t.mu.Unlock()
	procs := map[procKey]*wire.ProcessTraffic{}
	remotes := map[procKey]map[remoteKey]*wire.Remote{}
	l7 := map[l7Key]*wire.L7Observation{}
	dns := map[dnsKey]*wire.DNSObservation{}

	// The connections by remote address, for DNS names asked from a
	// socket that was gone before its lookup (a resolver closes its
	// socket within a millisecond): the process that connected to an
	// answer's address within answerWindow after the answer asked it.
	byRemote := map[netip.Addr][]*flow{}
	for k, f := range t.flows {
		if f.resolved && f.owner.reason == "" && k.remote.Port() != 53 {
			byRemote[k.remote.Addr()] = append(byRemote[k.remote.Addr()], f)
		}
	}

	for k, f := range t.flows {
		pk := procKey{name: wire.UnattributedProcess}
		if f.resolved && f.owner.reason == "" {
			pk = procKey{f.owner.name, f.owner.pid}
		}
		if f.in|f.out|f.pin|f.pout != 0 {
			if pk.name == wire.UnattributedProcess {
				reason := f.owner.reason
				switch {
				case !f.resolved && f.attempts == 0:
					reason = wire.ReasonLookupLimited
				case !f.resolved:
					reason = wire.ReasonNoSocket // so far; retried next interval
				}
				c := t.unattr[reason]
				if c == nil {
					c = &counter{}
					t.unattr[reason] = c
				}
				c.in, c.out, c.pin, c.pout = c.in+f.in, c.out+f.out, c.pin+f.pin, c.pout+f.pout
			} else {
				p := procs[pk]
				if p == nil {
					p = &wire.ProcessTraffic{Process: pk.name, PID: pk.pid}
					procs[pk] = p
					remotes[pk] = map[remoteKey]*wire.Remote{}
				}
				p.BytesIn, p.BytesOut, p.PacketsIn, p.PacketsOut = p.BytesIn+f.in, p.BytesOut+f.out, p.PacketsIn+f.pin, p.PacketsOut+f.pout
				rk := remoteKey{k.proto, k.remote.String()}
				r := remotes[pk][rk]
				if r == nil {
					r = &wire.Remote{Proto: protoName(k.proto), IP: k.remote.Addr().String(), Port: k.remote.Port()}
					remotes[pk][rk] = r
				}
				r.BytesIn, r.BytesOut, r.PacketsIn, r.PacketsOut = r.BytesIn+f.in, r.BytesOut+f.out, r.PacketsIn+f.pin, r.PacketsOut+f.pout
			}
		}
		if f.host != "" && (f.hits > 0 || f.in+f.out > 0) {
			lk := l7Key{f.host, f.kind, pk}
			o := l7[lk]
			if o == nil {
				o = &wire.L7Observation{Host: f.host, Kind: f.kind, Process: pk.name, PID: pk.pid}
				l7[lk] = o
			}
			o.Bytes += f.in + f.out
			o.Hits += f.hits
		}
		for i := range f.dns {
			d := &f.dns[i]
			if d.queries+d.responses == 0 {
				continue
			}
			dpk := pk
			if pk.name == wire.UnattributedProcess {
				dpk = askerOf(d, byRemote, dpk)
			}
			dk := dnsKey{d.name, dpk}
			o := dns[dk]
			if o == nil {
				o = &wire.DNSObservation{Domain: d.name, Process: dpk.name, PID: dpk.pid}
				dns[dk] = o
			}
			o.Queries += d.queries
			o.Responses += d.responses
			d.queries, d.responses = 0, 0
		}
		f.in, f.out, f.pin, f.pout, f.hits = 0, 0, 0, 0, 0
		// An unresolved flow stays until it is resolved: its owner
		// may still be found for the next interval's bytes.
		if now.Sub(f.last) > t.cfg.FlowIdle && f.resolved {
			t.endL7(f)
			delete(t.flows, k)
		}
	}

	var r Report
	for pk, p := range procs {
		for _, rm := range remotes[pk] {
			p.Remotes = append(p.Remotes, *rm)
		}
		slices.SortFunc(p.Remotes, func(a, b wire.Remote) int {
			return cmp.Or(cmp.Compare(b.BytesIn+b.BytesOut, a.BytesIn+a.BytesOut), cmp.Compare(a.IP, b.IP), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Proto, b.Proto))
		})
		if len(p.Remotes) > wire.MaxRemotes {
			p.Remotes = p.Remotes[:wire.MaxRemotes]
		}
		r.Processes = append(r.Processes, *p)
	}
	if u := t.unattributedRow(); u != nil {
		r.Processes = append(r.Processes, *u)
	}
	clear(t.unattr)
	for _, o := range l7 {
		r.L7 = append(r.L7, *o)
	}
	for _, o := range dns {
		r.DNS = append(r.DNS, *o)
	}
	slices.SortFunc(r.Processes, func(a, b wire.ProcessTraffic) int {
		return cmp.Or(cmp.Compare(b.BytesIn+b.BytesOut, a.BytesIn+a.BytesOut), cmp.Compare(b.PacketsIn+b.PacketsOut, a.PacketsIn+a.PacketsOut),
			cmp.Compare(a.Process, b.Process), cmp.Compare(a.PID, b.PID))
	})
	slices.SortFunc(r.L7, func(a, b wire.L7Observation) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Hits, a.Hits), cmp.Compare(a.Host, b.Host), cmp.Compare(a.Process, b.Process), cmp.Compare(a.PID, b.PID))
	})
	slices.SortFunc(r.DNS, func(a, b wire.DNSObservation) int {
		return cmp.Or(cmp.Compare(b.Queries+b.Responses, a.Queries+a.Responses), cmp.Compare(a.Domain, b.Domain), cmp.Compare(a.Process, b.Process), cmp.Compare(a.PID, b.PID))
	})
	max := t.cfg.MaxRows
	r.Processes, r.L7, r.DNS = r.Processes[:min(len(r.Processes), max)], r.L7[:min(len(r.L7), max)], r.DNS[:min(len(r.DNS), max)]
	return r
}

// askerOf returns the owner of the first connection to one of d's answer
// addresses made within answerWindow after the answer, else def.
func askerOf(d *dnsCount, byRemote map[netip.Addr][]*flow, def procKey) procKey {
	var best *flow
	for _, a := range d.answers {
		for _, f := range byRemote[a] {
			dt := f.first.Sub(d.answeredAt)
			if dt >= 0 && dt <= answerWindow && (best == nil || f.first.Before(best.first)) {
				best = f
			}
		}
	}
	if best == nil {
		return def
	}
	return procKey{best.owner.name, best.owner.pid}
}

// unattributedRow sums the unattributed counters into the
// "(unattributed)" row with its reasons; nil when there were none.
func (t *table) unattributedRow() *wire.ProcessTraffic {
	if len(t.unattr) == 0 {
		return nil
	}
	u := &wire.ProcessTraffic{Process: wire.UnattributedProcess}
	for reason, c := range t.unattr {
		u.BytesIn, u.BytesOut, u.PacketsIn, u.PacketsOut = u.BytesIn+c.in, u.BytesOut+c.out, u.PacketsIn+c.pin, u.PacketsOut+c.pout
		u.Reasons = append(u.Reasons, wire.UnattributedReason{Reason: reason, Bytes: c.in + c.out, Packets: c.pin + c.pout})
	}
	slices.SortFunc(u.Reasons, func(a, b wire.UnattributedReason) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Packets, a.Packets), cmp.Compare(a.Reason, b.Reason))
	})
	return u
}

func protoName(p uint8) string {
	if p == protoUDP {
		return "udp"
	}
	return "tcp"
}
