package attr

import (
	"cmp"
	"slices"

	"netmon/agentmode/wire"
	"netmon/capture/ebpf"
)

// reportFromDelta groups the kernel's flows by process and remote end.
// Socket calls are reported as packets (see capture/ebpf). The backends
// that count per socket in the operating system (ebpf, etw) share it.
func reportFromDelta(d ebpf.Delta, maxRows int) Report {
	procs := map[procKey]*wire.ProcessTraffic{}
	remotes := map[procKey]map[remoteKey]*wire.Remote{}
	var gone ebpf.Counters // etw: the PID had no name any more
	for _, f := range d.Flows {
		if f.Comm == "" {
			gone.BytesIn, gone.BytesOut = gone.BytesIn+f.BytesIn, gone.BytesOut+f.BytesOut
			gone.CallsIn, gone.CallsOut = gone.CallsIn+f.CallsIn, gone.CallsOut+f.CallsOut
			continue
		}
		pk := procKey{f.Comm, f.PID}
		p := procs[pk]
		if p == nil {
			p = &wire.ProcessTraffic{Process: f.Comm, PID: f.PID}
			procs[pk] = p
			remotes[pk] = map[remoteKey]*wire.Remote{}
		}
		p.BytesIn, p.BytesOut = p.BytesIn+f.BytesIn, p.BytesOut+f.BytesOut
		p.PacketsIn, p.PacketsOut = p.PacketsIn+f.CallsIn, p.PacketsOut+f.CallsOut
		if f.Remote.Port() == 0 && f.Remote.Addr().IsUnspecified() {
			continue // an unconnected UDP socket: no remote end known
		}
		rk := remoteKey{f.Proto, f.Remote.String()}
		r := remotes[pk][rk]
		if r == nil {
			r = &wire.Remote{Proto: protoName(f.Proto), IP: f.Remote.Addr().String(), Port: f.Remote.Port()}
			remotes[pk][rk] = r
		}
		r.BytesIn, r.BytesOut = r.BytesIn+f.BytesIn, r.BytesOut+f.BytesOut
		r.PacketsIn, r.PacketsOut = r.PacketsIn+f.CallsIn, r.PacketsOut+f.CallsOut
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
	u := wire.ProcessTraffic{Process: wire.UnattributedProcess}
	for _, l := range []struct {
		reason string
		c      ebpf.Counters
	}{{wire.ReasonKernel, d.Kernel}, {wire.ReasonTableFull, d.MapFull}, {wire.ReasonProcessGone, gone}} {
		if l.c.Zero() {
			continue
		}
		u.BytesIn, u.BytesOut = u.BytesIn+l.c.BytesIn, u.BytesOut+l.c.BytesOut
		u.PacketsIn, u.PacketsOut = u.PacketsIn+l.c.CallsIn, u.PacketsOut+l.c.CallsOut
		u.Reasons = append(u.Reasons, wire.UnattributedReason{Reason: l.reason, Bytes: l.c.BytesIn + l.c.BytesOut, Packets: l.c.CallsIn + l.c.CallsOut})
	}
	if len(u.Reasons) > 0 {
		slices.SortFunc(u.Reasons, func(a, b wire.UnattributedReason) int {
			return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Reason, b.Reason))
		})
		r.Processes = append(r.Processes, u)
	}
	slices.SortFunc(r.Processes, func(a, b wire.ProcessTraffic) int {
		return cmp.Or(cmp.Compare(b.BytesIn+b.BytesOut, a.BytesIn+a.BytesOut), cmp.Compare(b.PacketsIn+b.PacketsOut, a.PacketsIn+a.PacketsOut),
			cmp.Compare(a.Process, b.Process), cmp.Compare(a.PID, b.PID))
	})
	r.Processes = r.Processes[:min(len(r.Processes), maxRows)]
	return r
}
