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

// startETW is the seam of the ETW backend. The kernel network
// provider's events are decoded and summed (etw.go, tested on fixtures);
// the real-time trace session that would feed them is not built: no
// maintained pure-Go ETW library was available to this build (the module
// proxy refused golang-etw and its forks), and a hand-written session
// over advapi32 could not be run here.
func startETW(*slog.Logger, Config) (Backend, error) {
	return nil, errors.New("etw: trace session not built yet in this version (event decoding only)")
}
