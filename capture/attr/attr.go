// Package attr is the agent's deep collection (spec 1, "Agent behaviour"):
// attribution backends that count traffic per process and observe TLS SNI,
// HTTP Host and DNS names, behind one small interface, Backend, selected
// by collect.method.
//
// Backends, in the spec's auto order per system:
//
//   - ebpf (Linux, kernel 6.3+ with BTF, CAP_BPF and CAP_PERFMON or
//     root): capture/ebpf counts every TCP/UDP sendmsg/recvmsg per
//     process and socket in the kernel; ebpf_linux.go shapes its deltas.
//     It sees every network namespace and has no L7 or DNS section.
//   - etw (Windows, elevated): a real-time trace session on the
//     Microsoft-Windows-Kernel-Network provider over advapi32
//     (etw_windows.go, its structures in etw_layout.go, decoding in
//     etw.go). Compile-checked only.
//   - pcap (pcap.go) through capture/source, snaplen 600: AF_PACKET on
//     Linux, flows mapped to processes from the socket tables (sock_diag
//     netlink) and the /proc/<pid>/fd links, read on a cache miss at most
//     every LookupEvery and incrementally (sockets_linux.go). On macOS
//     /dev/bpf* in pure Go, without a socket table (pcap_darwin.go: bytes
//     unattributed, names kept). On Windows Npcap's wpcap.dll, loaded at
//     run time without cgo (pcap_windows.go), flows mapped to processes
//     from the iphlpapi owner-PID tables (sockets_windows.go, parsed in
//     sockets_wintable.go); compile-checked only.
//
// The order per system, the fallbacks and the notes are data keyed by
// GOOS (platform.go), tested on Linux for every system.
//
// What pcap cannot do: tie traffic to a process that exits within a few
// milliseconds of its first packet (its socket is gone before the lookup;
// such bytes are reported as "(unattributed)" with their reason). A DNS
// name asked from such a socket goes to the process that connects to
// the answer's address within answerWindow, else stays unattributed.
//
// Open tries the candidates in order and records each refusal as a
// precise note ("ebpf: needs CAP_BPF and CAP_PERFMON, or root", "pcap: needs
// CAP_NET_RAW or root"), which the agent sends as attr_note.
//
// Where it sits: a producer under capture/, imported by the agent
// (agentmode/collect). It imports the leaves capture/decode and
// agentmode/wire (its reports are the wire's section types, so nothing is
// converted twice) and the producer capture/source. It does not use
// capture/proc's lister (gopsutil), which reads every process's
// descriptors on each call: too slow to catch short-lived sockets.
package attr

import "netmon/agentmode/wire"

// Backend is one running attribution backend.
//
// Bytes are transport payload bytes (what the process wrote to or read
// from its TCP or UDP socket, retransmissions included), which every
// backend can measure the same way: socket hooks see exactly that, and
// pcap computes it from the IP and transport headers whatever the snaplen.
// Packets count every packet, pure ACKs included.
type Backend interface {
	// Method is "ebpf", "pcap" or "etw".
	Method() string
	// Iface is the captured interface (pcap), "" for the others.
	Iface() string
	// Collect returns what was observed since the previous Collect (or
	// since the backend started) and starts a new interval. It is called
	// from one goroutine, once per telemetry interval.
	Collect() Report
	// Stop releases the backend; Collect must not be called after it.
	Stop() error
}

// Report is one interval of deep collection: deltas, in the wire's shapes.
type Report struct {
	Processes []wire.ProcessTraffic
	L7        []wire.L7Observation
	DNS       []wire.DNSObservation
}

// Methods accepted by Open (collect.method).
const (
	MethodAuto = "auto"
	MethodEBPF = "ebpf"
	MethodPcap = "pcap"
	MethodETW  = "etw"
	MethodOff  = "off"
)

// Status is what the agent reports about attribution with every batch:
// attr_method, attr_iface and attr_note.
type Status struct {
	// Method is the running backend, or "off".
	Method string
	// Iface is the pcap interface.
	Iface string
	// Note says why the backends before the running one, or all of them,
	// are not running: one "method: reason" per refusal, "; "-separated.
	Note string
}
