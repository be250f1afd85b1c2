package attr

import (
	"errors"
	"log/slog"
)

// startEBPF is the seam of the eBPF backend (capture/ebpf, built in
// another change): it will load the programs and return a Backend, or an
// error naming what is missing ("ebpf: kernel 5.4 has no BTF", "ebpf:
// needs CAP_BPF or root"). Until then auto goes on to pcap.
func startEBPF(*slog.Logger, Config) (Backend, error) {
	return nil, errors.New("ebpf: not built yet in this version")
}
