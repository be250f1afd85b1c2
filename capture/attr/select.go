package attr

import (
	"log/slog"
	"runtime"
	"strings"
)

// candidate is one backend this system may run: start builds and starts
// it, or returns why it cannot run here as an error whose text is the
// note ("pcap: needs CAP_NET_RAW or root").
type candidate struct {
	method string
	start  startFunc
	// after, when set, makes this a fallback tried only when the
	// candidate before it refused with exactly this note.
	after string
}

// Open starts the backend cfg.Method asks for: with auto, the first of
// this system's candidates that starts (spec order: Linux ebpf then pcap,
// Windows etw then pcap, macOS pcap); with a named method, that one
// (plus the spec's Windows fallback from pcap to etw when Npcap cannot
// load). It returns nil and Status.Method "off" when none starts; the
// note then lists every refusal. It never fails otherwise: attribution off is a state, and base
// telemetry goes on.
func Open(log *slog.Logger, cfg Config) (Backend, Status) {
	return open(log, cfg, runtime.GOOS, platformStarters)
}

// open is Open for the system goos with its starters: the per-system
// order, fallbacks and notes are plain data (platform.go), so one test on
// Linux covers Windows' and macOS' logic too.
func open(log *slog.Logger, cfg Config, goos string, s starters) (Backend, Status) {
	cfg = cfg.withDefaults()
	if cfg.Method == MethodOff {
		return nil, Status{Method: MethodOff, Note: "collect.method off"}
	}
	var notes []string
	for _, c := range candidates(goos, s, cfg.Method) {
		if c.after != "" && (len(notes) == 0 || notes[len(notes)-1] != c.after) {
			continue
		}
		if c.start == nil {
			notes = append(notes, c.method+": "+unavailable(goos, c.method))
			continue
		}
		b, err := c.start(log, cfg)
		if err != nil {
			notes = append(notes, err.Error())
			log.Info("attribution backend not started", "method", c.method, "reason", err.Error())
			continue
		}
		if n, ok := b.(interface{ Note() string }); ok && n.Note() != "" {
			notes = append(notes, n.Note()) // what the running backend lacks
		}
		log.Info("attribution backend started", "method", b.Method(), "iface", b.Iface())
		return b, Status{Method: b.Method(), Iface: b.Iface(), Note: strings.Join(notes, "; ")}
	}
	if len(notes) == 0 {
		notes = append(notes, "collect.method "+cfg.Method+": unknown method")
	}
	return nil, Status{Method: MethodOff, Note: strings.Join(notes, "; ")}
}

// candidates returns the backends to try for method, in order, from the
// platform's table; a method the platform cannot run at all appears with
// a nil start so its note is still recorded.
func candidates(goos string, s starters, method string) []candidate {
	all := platformCandidates(goos, s)
	if method == MethodAuto {
		return all
	}
	var out []candidate
	for _, c := range all {
		if c.method == method {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return []candidate{{method: method}}
	}
	return append(out, fallbacks(goos, s, method)...)
}
