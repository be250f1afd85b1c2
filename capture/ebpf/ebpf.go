// Package ebpf is the kernel side of the agent's eBPF attribution
// backend: two tp_btf programs (attr.bpf.c) count the bytes and calls of
// every IPv4/IPv6 TCP and UDP sendmsg/recvmsg per (process ID, process
// name, protocol, local and remote address and port) in per-socket slots
// of two memory-mapped arrays, found through a per-CPU cache of the
// sockets and tasks last seen, else the socket's local storage (a
// per-CPU hash for a socket's second process); a third, on task exits,
// keeps the cache exact. Accountant reads the slots as deltas.
//
// Why tracepoints: kprobes, kprobe_multi and fentry are refused on many
// kernels (this project's CI among them); the sock:sock_send_length and
// sock:sock_recv_length tracepoints (kernel 6.3+) fire in the calling
// task's context with the socket, so the process is exact even when it
// exits right after, and no socket-table lookup is needed.
//
// What it counts: transport payload bytes as the process wrote or read
// them (the same unit as the pcap backend), and socket calls, which the
// backend reports as packets (one call is one datagram for UDP; for TCP
// a call may be several segments or part of one). What it cannot see:
// the remote end of an unconnected UDP socket (sendto/recvfrom without
// connect): those bytes count for the process with no remote row.
//
// Where it sits: a producer under capture/, imported by capture/attr,
// which shapes its deltas into the wire's process rows. Linux only; on
// other systems Start returns ErrUnsupported.
package ebpf

import (
	"errors"
	"net/netip"
	"time"
)

// ErrUnsupported is Start's error on systems without eBPF.
var ErrUnsupported = errors.New("ebpf: Linux only")

// Counters are bytes and socket calls in both directions.
type Counters struct {
	BytesIn, BytesOut, CallsIn, CallsOut uint64
}

// Zero reports whether nothing was counted.
func (c Counters) Zero() bool { return c.BytesIn|c.BytesOut|c.CallsIn|c.CallsOut == 0 }

func (c Counters) sub(p Counters) Counters {
	// A counter that went backwards was deleted and recreated between
	// two reads: the new value is all new.
	d := func(a, b uint64) uint64 {
		if a < b {
			return a
		}
		return a - b
	}
	return Counters{d(c.BytesIn, p.BytesIn), d(c.BytesOut, p.BytesOut), d(c.CallsIn, p.CallsIn), d(c.CallsOut, p.CallsOut)}
}

// Flow is one process's socket and what it moved since the last Read.
type Flow struct {
	PID   int32
	Comm  string
	Proto uint8 // 6 tcp, 17 udp
	// Local and Remote; Remote is the zero AddrPort's address
	// (unspecified, port 0) for an unconnected UDP socket.
	Local, Remote netip.AddrPort
	Counters
}

// Delta is what the kernel counted since the last Read.
type Delta struct {
	Flows []Flow
	// Kernel is traffic of kernel threads' sockets (no process).
	Kernel Counters
	// MapFull is traffic not counted per flow because the kernel map
	// was full.
	MapFull Counters
}

// ProgStats is the kernel's run statistics of one program, counted
// while kernel.bpf_stats_enabled is on (EnableStats).
type ProgStats struct {
	Name     string
	RunTime  time.Duration
	RunCount uint64
}

// idleReads is how many reads an entry may go unchanged before it is
// deleted from the kernel map (its socket is most likely closed).
// Bytes added between that read and the delete are lost, which is why
// only idle entries are deleted.
const idleReads = 3
