package attr

import (
	"log/slog"
	"strings"
)

// Each system's backends, their order and the notes that say why one
// cannot run, as data keyed by GOOS: the platform files only supply the
// start functions (platformStarters), so the logic of every system is
// tested on Linux (platform_test.go).

// startFunc builds and starts a backend, or returns why it cannot run
// here as an error whose text is the note.
type startFunc func(log *slog.Logger, cfg Config) (Backend, error)

// starters are this build's start functions; nil where the method is not
// built for the system.
type starters struct {
	ebpf, pcap, etw startFunc
}

// Notes of refusals and of running backends that lack something. The
// exact texts are what operators read in attr_note; platform_test.go
// pins them.
const (
	// noteETWElevated: StartTrace or EnableTraceEx2 refused access.
	noteETWElevated = "etw: needs an elevated agent (run as administrator)"
	// notePcapNoNpcap: wpcap.dll could not be loaded: Npcap is not
	// installed. The one refusal after which a forced pcap falls back to
	// etw (spec 1).
	notePcapNoNpcap = "pcap: needs Npcap (wpcap.dll not found)"
	// notePcapNoAdapters: Npcap is installed but lists no adapter: its
	// driver is not running, or (installed for administrators only) it
	// shows none to an agent that is not elevated.
	notePcapNoAdapters = "pcap: Npcap lists no adapters (driver not running, or restricted to administrators)"
	// notePcapWindowsDenied: Npcap refused to open the adapter: it was
	// installed with access restricted to administrators.
	notePcapWindowsDenied = "pcap: needs an elevated agent (Npcap is restricted to administrators)"
	// notePcapDarwinDenied: no /dev/bpf* device could be opened.
	notePcapDarwinDenied = "pcap: needs root or read access to /dev/bpf*"
	// reasonNoSocketTable is the unattributed reason of every byte the
	// macOS pcap backend counts, and noteDarwinNoPIDs the attr_note it
	// runs with: the socket-to-process table of macOS (proc_pidinfo,
	// libproc) is reachable only through cgo, which the release build
	// does not use. L7 and DNS names are still extracted.
	reasonNoSocketTable = "no socket table on macOS without cgo"
	noteDarwinNoPIDs    = "pcap: bytes unattributed (" + reasonNoSocketTable + "); L7 and DNS names kept"
)

// platformCandidates is goos's auto order (spec 1): Linux ebpf then pcap;
// Windows etw then pcap; macOS and the rest pcap.
func platformCandidates(goos string, s starters) []candidate {
	switch goos {
	case "linux":
		return []candidate{{method: MethodEBPF, start: s.ebpf}, {method: MethodPcap, start: s.pcap}}
	case "windows":
		return []candidate{{method: MethodETW, start: s.etw}, {method: MethodPcap, start: s.pcap}}
	}
	return []candidate{{method: MethodPcap, start: s.pcap}}
}

// fallbacks are tried after a forced method: on Windows a forced pcap
// falls back to etw when the packet library cannot load (spec 1: "only
// on an elevated Windows host where the packet library cannot load"; etw
// itself refuses a host that is not elevated); elsewhere none.
func fallbacks(goos string, s starters, method string) []candidate {
	if goos == "windows" && method == MethodPcap {
		return []candidate{{method: MethodETW, start: s.etw, after: notePcapNoNpcap}}
	}
	return nil
}

// unavailable says why a method cannot run on goos at all.
func unavailable(goos, method string) string {
	switch {
	case method == MethodEBPF && goos != "linux":
		return "Linux only"
	case method == MethodETW && goos != "windows":
		return "Windows only"
	case method == MethodPcap:
		return "not built for " + goos
	}
	return "unknown method"
}

// darwinVirtualPrefixes are the name prefixes of macOS's virtual
// interfaces: tunnels and VPN (utun, ipsec, gif, stf), bridges and
// Apple's peer links (bridge, awdl, llw, ap, anpi), hypervisor adapters
// (vmenet, feth) and loopback. Physical Ethernet and Wi-Fi are en*.
var darwinVirtualPrefixes = []string{"utun", "ipsec", "gif", "stf", "bridge", "awdl", "llw", "ap", "anpi", "vmenet", "feth", "lo"}

// darwinVirtual is isVirtual of macOS (iface_darwin.go), here so it is
// tested on Linux.
func darwinVirtual(name string) bool {
	for _, p := range darwinVirtualPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
