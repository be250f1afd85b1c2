package attr

import (
	"cmp"
	"log/slog"
	"slices"

	"netmon/agentmode/wire"
	"netmon/capture/ebpf"
)

// ebpfBackend is the eBPF backend: capture/ebpf counts in the kernel,
// this shapes its deltas into the wire's process rows. It sees every
// network namespace of the host (containers included) and has no L7 or
// DNS section: payloads are not read in the kernel.
type ebpfBackend struct {
	log *slog.Logger
	cfg Config
	acc *ebpf.Accountant
}

// startEBPF loads and attaches the programs, or returns the reason it
// cannot ("ebpf: kernel 5.4 has no BTF ...", "ebpf: needs CAP_BPF and
// CAP_PERFMON, or root").
func startEBPF(log *slog.Logger, cfg Config) (Backend, error) {
	acc, err := ebpf.Start()
	if err != nil {
		return nil, err
	}
	return &ebpfBackend{log: log, cfg: cfg, acc: acc}, nil
}

func (b *ebpfBackend) Method() string { return MethodEBPF }
func (b *ebpfBackend) Iface() string  { return "" }
func (b *ebpfBackend) Stop() error    { return b.acc.Close() }

func (b *ebpfBackend) Collect() Report {
	d, err := b.acc.Read()
	if err != nil {
		// Counted bytes stay in the kernel map: the next read reports
		// them.
		b.log.Warn("ebpf read", "err", err)
	}
	return reportFromDelta(d, b.cfg.MaxRows)
}

// reportFromDelta groups the kernel's flows by process and remote end.
// Socket calls are reported as packets (see capture/ebpf).
func reportFromDelta(d ebpf.Delta, maxRows int) Report {
	procs := map[procKey]*wire.ProcessTraffic{}
	remotes := map[procKey]map[remoteKey]*wire.Remote{}
	for _, f := range d.Flows {
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
	}{{wire.ReasonKernel, d.Kernel}, {wire.ReasonTableFull, d.MapFull}} {
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
