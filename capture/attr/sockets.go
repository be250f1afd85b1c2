package attr

import "net/netip"

// The socket-table index shared by the systems that have a socket table:
// Linux (sockets_linux.go: sock_diag or /proc/net, then /proc/<pid>/fd)
// and Windows (sockets_windows.go: the iphlpapi owner-PID tables, parsed
// in wintable.go).

// sockEntry is one socket of a system's socket table.
type sockEntry struct {
	proto         uint8
	local, remote netip.AddrPort
	// state is the TCP state in the system's own numbering (Linux
	// tcp_states.h, Windows MIB_TCP_STATE); 0 for UDP.
	state int
	// inode is the socket's inode (Linux; 0 for TIME_WAIT and other
	// sockets no process holds).
	//lint:ignore U1000 read by sockets_linux.go only; the struct is shared with Windows
	inode uint64
	// pid is the owning process (Windows tables; 0 when no process owns
	// it, as in TIME_WAIT).
	pid uint32
}

// boundKey finds a listening TCP socket or an unconnected UDP socket by
// its local end (the address may be unspecified: bound to all).
type boundKey struct {
	proto uint8
	addr  netip.Addr
	port  uint16
}

// entryIndex finds the socket table entry of a flow.
type entryIndex struct {
	exact map[flowKey]sockEntry
	bound map[boundKey]sockEntry
}

// newEntryIndex indexes entries: connected sockets by both ends, UDP
// sockets without a remote end and TCP sockets in state listen (the
// system's LISTEN value) by their local end. Other sockets without a
// remote end (a TCP socket closed or not yet connected) match no flow.
func newEntryIndex(entries []sockEntry, listen int) *entryIndex {
	ix := &entryIndex{exact: make(map[flowKey]sockEntry, len(entries)), bound: map[boundKey]sockEntry{}}
	for _, e := range entries {
		switch {
		case e.remote.Port() != 0:
			ix.exact[flowKey{e.proto, e.local, e.remote}] = e
		case e.proto == protoUDP || e.state == listen:
			ix.bound[boundKey{e.proto, e.local.Addr(), e.local.Port()}] = e
		}
	}
	return ix
}

// candidates returns the sockets flow k may belong to, best first: the
// connected socket with its exact ends, then the listening (TCP) or bound
// (UDP) socket of its local port, on its address or on all addresses.
func (ix *entryIndex) candidates(k flowKey) []sockEntry {
	var out []sockEntry
	if e, ok := ix.exact[k]; ok {
		out = append(out, e)
	}
	for _, a := range [...]netip.Addr{k.local.Addr(), netip.IPv4Unspecified(), netip.IPv6Unspecified()} {
		if e, ok := ix.bound[boundKey{k.proto, a, k.local.Port()}]; ok {
			return append(out, e)
		}
	}
	return out
}

// noSockets resolves every flow at once to reasonNoSocketTable, so no
// flow waits for lookups that cannot succeed.
type noSockets struct{}

func (noSockets) lookup([]flowKey) (func(flowKey) (owner, bool), error) {
	return func(flowKey) (owner, bool) { return owner{reason: reasonNoSocketTable}, true }, nil
}
