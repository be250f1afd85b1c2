package attr

import "log/slog"

// noNamesPrefix begins the note of a byte counter running without the
// pcap for names; the pcap's refusal follows.
const noNamesPrefix = "no L7 and DNS names: "

// namesBeside is a pcap backend run beside a backend whose events carry
// no payloads (eBPF on Linux, ETW on Windows) for the L7 and DNS
// sections only: its byte counts are not used. So auto loses no names
// for choosing the cheaper byte counter. When pcap cannot start, the
// counter runs without names and note says why.
type namesBeside struct {
	names Backend // nil when pcap cannot run or names are off
	note  string  // why names is nil ("" when names were not asked for)
}

// startNamesBeside starts the pcap for names unless cfg.NoNames.
func startNamesBeside(log *slog.Logger, cfg Config, method string) namesBeside {
	if cfg.NoNames {
		return namesBeside{}
	}
	p, err := startPcap(log, cfg)
	if err != nil {
		log.Info(method+" runs without L7 and DNS names", "reason", err.Error())
		return namesBeside{note: noNamesPrefix + err.Error()}
	}
	return namesBeside{names: p}
}

// iface is the interface the names are read on, "" without them.
func (n namesBeside) iface() string {
	if n.names == nil {
		return ""
	}
	return n.names.Iface()
}

// into puts the names read since the last call into r.
func (n namesBeside) into(r *Report) {
	if n.names == nil {
		return
	}
	got := n.names.Collect()
	r.L7, r.DNS = got.L7, got.DNS
}

func (n namesBeside) stop() error {
	if n.names == nil {
		return nil
	}
	return n.names.Stop()
}
