package attr

import (
	"context"
	"net/netip"

	"netmon/agentmode/wire"

	"netmon/capture/proc"
)

// boundKey finds a listening TCP socket or an unconnected UDP socket by
// its local end (the address may be unspecified: bound to all).
type boundKey struct {
	proto uint8
	addr  netip.Addr
	port  uint16
}

// sockIndex is one read of the host's socket tables, indexed for flows.
type sockIndex struct {
	exact map[flowKey]owner
	bound map[boundKey]owner
}

// readSockets reads the socket tables through capture/proc (gopsutil:
// /proc/net/{tcp,udp}{,6} and the /proc/<pid>/fd links on Linux) and
// indexes them. It costs a walk of /proc, which is why the backend calls
// it on a cache miss at most every LookupEvery, never per packet.
func readSockets(ctx context.Context, l *proc.Lister) (*sockIndex, error) {
	conns, err := l.List(ctx)
	if err != nil {
		return nil, err
	}
	ix := &sockIndex{exact: make(map[flowKey]owner, len(conns)), bound: map[boundKey]owner{}}
	for _, c := range conns {
		var proto uint8
		switch c.Proto {
		case "tcp", "tcp6":
			proto = protoTCP
		case "udp", "udp6":
			proto = protoUDP
		default:
			continue
		}
		local, err := netip.ParseAddrPort(c.LocalAddr)
		if err != nil {
			continue
		}
		local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
		o := ownerOf(c)
		if c.RemoteAddr != "" {
			if remote, err := netip.ParseAddrPort(c.RemoteAddr); err == nil {
				remote = netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
				ix.exact[flowKey{proto, local, remote}] = o
				continue
			}
		}
		if proto == protoUDP || c.Status == "LISTEN" {
			ix.bound[boundKey{proto, local.Addr(), local.Port()}] = o
		}
	}
	return ix, nil
}

// ownerOf turns a socket's pid and name into an owner: a process, or the
// reason there is none.
func ownerOf(c proc.Conn) owner {
	switch {
	case c.PID > 0 && c.Process != "":
		return owner{pid: c.PID, name: c.Process}
	case c.PID > 0:
		return owner{reason: wire.ReasonProcessGone}
	}
	switch c.Status {
	case "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "FIN_WAIT1", "FIN_WAIT2", "LAST_ACK", "CLOSING":
		// The socket outlived the process's hold on it.
		return owner{reason: wire.ReasonProcessGone}
	}
	return owner{reason: wire.ReasonKernel}
}

// match finds the socket of flow k: the connected socket with its exact
// ends, else the listening (TCP) or bound (UDP) socket of its local port,
// on its address or on all addresses.
func (ix *sockIndex) match(k flowKey) (owner, bool) {
	if o, ok := ix.exact[k]; ok {
		return o, true
	}
	for _, a := range [...]netip.Addr{k.local.Addr(), netip.IPv4Unspecified(), netip.IPv6Unspecified()} {
		if o, ok := ix.bound[boundKey{k.proto, a, k.local.Port()}]; ok {
			return o, true
		}
	}
	return owner{}, false
}
