package attr

// platformCandidates is Linux's auto order: ebpf then pcap.
func platformCandidates() []candidate {
	return []candidate{{MethodEBPF, startEBPF}, {MethodPcap, startPcap}}
}

// fallbacks: on Linux a forced method has none.
func fallbacks(string) []candidate { return nil }

// unavailable says why a method cannot run on Linux at all.
func unavailable(method string) string {
	if method == MethodETW {
		return "Windows only"
	}
	return "unknown method"
}
