//go:build !linux && !windows

package attr

// platformCandidates is the order of macOS and other systems: pcap only.
func platformCandidates() []candidate {
	return []candidate{{MethodPcap, startPcap}}
}

// fallbacks: none here.
func fallbacks(string) []candidate { return nil }

// unavailable says why a method cannot run on this system at all.
func unavailable(method string) string {
	switch method {
	case MethodEBPF:
		return "Linux only"
	case MethodETW:
		return "Windows only"
	}
	return "unknown method"
}
