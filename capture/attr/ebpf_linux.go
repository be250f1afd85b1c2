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
	names Backend // pcap, for L7 and DNS; nil when it cannot run
	note  string  // why names is nil
}

// startEBPF loads and attaches the programs, or returns the reason it
// cannot ("ebpf: kernel 5.4 has no BTF ...", "ebpf: needs CAP_BPF and
// CAP_PERFMON, or root").
func startEBPF(log *slog.Logger, cfg Config) (Backend, error) {
	acc, err := ebpf.Start()
	if err != nil {
		return nil, err
	}
	b := &ebpfBackend{log: log, cfg: cfg, acc: acc}
	if cfg.NoNames {
		return b, nil
	}
	if p, err := startPcap(log, cfg); err == nil {
		b.names = p
	} else {
		b.note = "no L7 and DNS names: " + err.Error()
		log.Info("ebpf runs without L7 and DNS names", "reason", err.Error())
	}
	return b, nil
}

func (b *ebpfBackend) Method() string { return MethodEBPF }

// Iface is the interface the names are read on, "" without them.
func (b *ebpfBackend) Iface() string {
	if b.names == nil {
		return ""
	}
	return b.names.Iface()
}

// Note says why there are no L7 and DNS names ("" when there are).
func (b *ebpfBackend) Note() string { return b.note }

func (b *ebpfBackend) Stop() error {
	err := b.acc.Close()
	if b.names != nil {
		err = errors.Join(err, b.names.Stop())
	}
	return err
}

func (b *ebpfBackend) Collect() Report {
	d, err := b.acc.Read()
	if err != nil {
		// Counted bytes stay in the kernel map: the next read reports
		// them.
		b.log.Warn("ebpf read", "err", err)
	}
	r := reportFromDelta(d, b.cfg.MaxRows)
	if b.names != nil {
		n := b.names.Collect()
		r.L7, r.DNS = n.L7, n.DNS
	}
	return r
}
