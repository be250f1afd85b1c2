package attr

import (
	"errors"
	"log/slog"

	"netmon/capture/ebpf"
)

// ebpfBackend is the eBPF backend: capture/ebpf counts in the kernel,
// this shapes its deltas into the wire's process rows. It sees every
// network namespace of the host (containers included). Payloads are not
// read in the kernel: the L7 and DNS sections come from a pcap backend
// run beside it when one can start (its byte counts are not used), so
// auto on Linux loses no names for choosing eBPF.
type ebpfBackend struct {
	log   *slog.Logger
	cfg   Config
	acc   *ebpf.Accountant
	names namesBeside // pcap, for L7 and DNS
}

// startEBPF loads and attaches the programs, or returns the reason it
// cannot ("ebpf: kernel 5.4 has no BTF ...", "ebpf: needs CAP_BPF and
// CAP_PERFMON, or root").
func startEBPF(log *slog.Logger, cfg Config) (Backend, error) {
	acc, err := ebpf.Start()
	if err != nil {
		return nil, err
	}
	return &ebpfBackend{log: log, cfg: cfg, acc: acc, names: startNamesBeside(log, cfg, MethodEBPF)}, nil
}

func (b *ebpfBackend) Method() string { return MethodEBPF }

// Iface is the interface the names are read on, "" without them.
func (b *ebpfBackend) Iface() string { return b.names.iface() }

// Note says why there are no L7 and DNS names ("" when there are).
func (b *ebpfBackend) Note() string { return b.names.note }

func (b *ebpfBackend) Stop() error {
	return errors.Join(b.acc.Close(), b.names.stop())
}

func (b *ebpfBackend) Collect() Report {
	d, err := b.acc.Read()
	if err != nil {
		// Counted bytes stay in the kernel map: the next read reports
		// them.
		b.log.Warn("ebpf read", "err", err)
	}
	r := reportFromDelta(d, b.cfg.MaxRows)
	b.names.into(&r)
	return r
}
