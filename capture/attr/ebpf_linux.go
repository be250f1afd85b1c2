package attr

import (
	"log/slog"

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
