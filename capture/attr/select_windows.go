package attr

import (
	"errors"
	"log/slog"
)

// platformCandidates is Windows' auto order: etw then pcap.
func platformCandidates() []candidate {
	return []candidate{{MethodETW, startETW}, {MethodPcap, startPcap}}
}

// fallbacks: a forced pcap falls back to etw on an elevated host where
// the packet library cannot load (spec 1).
func fallbacks(method string) []candidate {
	if method == MethodPcap {
		return []candidate{{MethodETW, startETW}}
	}
	return nil
}

// unavailable says why a method cannot run on Windows at all.
func unavailable(method string) string {
	if method == MethodEBPF {
		return "Linux only"
	}
	return "unknown method"
}

// startETW is the seam of the ETW backend (kernel network provider), not
// in this build.
func startETW(*slog.Logger, Config) (Backend, error) {
	return nil, errors.New("etw: not built yet in this version")
}
