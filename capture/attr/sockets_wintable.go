package attr

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"netmon/agentmode/wire"
)

// The Windows socket tables, as GetExtendedTcpTable and
// GetExtendedUdpTable return them (sockets_windows.go makes the calls):
// parsed here, without a build tag, so the parsing and the matching of
// flows to owners are tested on Linux on byte fixtures built from
// Microsoft's documented layouts (iphlpapi, tcpmib.h and udpmib.h).
//
// Each table is a DWORD dwNumEntries followed by that many rows; every
// field is a DWORD (host order: little-endian on every Windows target)
// or a byte array, so rows follow the count without padding:
//
//	MIB_TCPROW_OWNER_PID   (24 bytes): dwState, dwLocalAddr, dwLocalPort,
//	                       dwRemoteAddr, dwRemotePort, dwOwningPid
//	MIB_TCP6ROW_OWNER_PID  (56 bytes): ucLocalAddr[16], dwLocalScopeId,
//	                       dwLocalPort, ucRemoteAddr[16], dwRemoteScopeId,
//	                       dwRemotePort, dwState, dwOwningPid
//	MIB_UDPROW_OWNER_PID   (12 bytes): dwLocalAddr, dwLocalPort, dwOwningPid
//	MIB_UDP6ROW_OWNER_PID  (28 bytes): ucLocalAddr[16], dwLocalScopeId,
//	                       dwLocalPort, dwOwningPid
//
// IPv4 addresses are in network order (the in_addr bytes); a port is in
// network order in the low 16 bits of its DWORD, that is in the DWORD's
// first two bytes, and the upper bits may hold garbage (the documentation
// says so), so they are ignored.

// winTable names one of the four tables.
type winTable uint8

const (
	winTCP4 winTable = iota // MIB_TCPTABLE_OWNER_PID (AF_INET, TCP_TABLE_OWNER_PID_ALL)
	winTCP6                 // MIB_TCP6TABLE_OWNER_PID (AF_INET6)
	winUDP4                 // MIB_UDPTABLE_OWNER_PID (AF_INET, UDP_TABLE_OWNER_PID)
	winUDP6                 // MIB_UDP6TABLE_OWNER_PID (AF_INET6)
)

func (t winTable) String() string {
	return [...]string{"MIB_TCPTABLE_OWNER_PID", "MIB_TCP6TABLE_OWNER_PID", "MIB_UDPTABLE_OWNER_PID", "MIB_UDP6TABLE_OWNER_PID"}[t]
}

// rowSize is the size of one row of t.
func (t winTable) rowSize() int { return [...]int{24, 56, 12, 28}[t] }

// MIB_TCP_STATE values (tcpmib.h) the attribution needs.
const (
	winTCPListen   = 2
	winTCPTimeWait = 11
)

// The PIDs Windows gives sockets no user process owns: 0 (System Idle
// Process) for TIME_WAIT sockets, 4 (System) for the kernel's own (SMB,
// NetBIOS, http.sys).
const (
	winPIDNone   = 0
	winPIDSystem = 4
)

// winTableError says a table is shorter than its row count says.
type winTableError struct {
	Table winTable
	Rows  uint32
	Len   int
}

func (e *winTableError) Error() string {
	return fmt.Sprintf("%s: %d rows do not fit in %d bytes", e.Table, e.Rows, e.Len)
}

// parseWinTable appends the sockets of one table to out. A buffer too
// short for its count is refused whole (a *winTableError): the API
// filled it, so it is not a torn read but a wrong call. Bytes after the
// last row are ignored (the buffer is usually larger than the table).
func parseWinTable(t winTable, b []byte, out []sockEntry) ([]sockEntry, error) {
	if len(b) < 4 {
		return out, &winTableError{Table: t, Len: len(b)}
	}
	n := binary.LittleEndian.Uint32(b)
	size := t.rowSize()
	if uint64(n)*uint64(size) > uint64(len(b)-4) {
		return out, &winTableError{Table: t, Rows: n, Len: len(b)}
	}
	rows := b[4 : 4+int(n)*size]
	for i := 0; i < int(n); i++ {
		out = append(out, parseWinRow(t, rows[i*size:(i+1)*size]))
	}
	return out, nil
}

// parseWinRow parses one row of t (r is exactly one row long).
func parseWinRow(t winTable, r []byte) sockEntry {
	le := binary.LittleEndian.Uint32
	switch t {
	case winTCP4:
		return sockEntry{proto: protoTCP, state: int(le(r[0:])),
			local: winAddr4(r[4:], r[8:]), remote: winAddr4(r[12:], r[16:]), pid: le(r[20:])}
	case winTCP6:
		// The scope ids (r[16:20], r[40:44]) are dropped: flow keys come
		// from frames, which carry none.
		return sockEntry{proto: protoTCP, state: int(le(r[48:])),
			local: winAddr6(r[0:], r[20:]), remote: winAddr6(r[24:], r[44:]), pid: le(r[52:])}
	case winUDP4:
		return sockEntry{proto: protoUDP, local: winAddr4(r[0:], r[4:]), pid: le(r[8:])}
	default: // winUDP6; scope id at r[16:20]
		return sockEntry{proto: protoUDP, local: winAddr6(r[0:], r[20:]), pid: le(r[24:])}
	}
}

// winAddr4 is an in_addr and a port DWORD.
func winAddr4(a, port []byte) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte(a[:4])), binary.BigEndian.Uint16(port))
}

// winAddr6 is an in6_addr (IPv4-mapped ones unmapped, as frames give
// them) and a port DWORD.
func winAddr6(a, port []byte) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom16([16]byte(a[:16])).Unmap(), binary.BigEndian.Uint16(port))
}

// winMatch finds the owner of each of keys in the Windows tables'
// entries, naming PIDs with name (false when the process is gone). It
// runs before the flow table is locked: name opens processes.
func winMatch(entries []sockEntry, keys []flowKey, name func(pid uint32) (string, bool)) func(flowKey) (owner, bool) {
	ix := newEntryIndex(entries, winTCPListen)
	found := make(map[flowKey]owner, len(keys))
	for _, k := range keys {
		cands := ix.candidates(k)
		if len(cands) == 0 {
			continue // retried at the next reads, as on Linux
		}
		// The connected socket's owner; else the listener's, for a
		// connection in TIME_WAIT (PID 0) on a server port: the bytes
		// were the server's. As sockets_linux.go does with inode 0.
		e := cands[0]
		for _, c := range cands {
			if c.pid != winPIDNone {
				e = c
				break
			}
		}
		found[k] = winOwner(e, name)
	}
	return func(k flowKey) (owner, bool) {
		o, ok := found[k]
		return o, ok
	}
}

// winOwner is the owner of one table entry: the reasons are Linux's
// (sockets_linux.go ownerOf) where the cases agree.
func winOwner(e sockEntry, name func(pid uint32) (string, bool)) owner {
	switch e.pid {
	case winPIDNone:
		// TIME_WAIT and other sockets the process has let go of.
		return owner{reason: wire.ReasonProcessGone}
	case winPIDSystem:
		return owner{reason: wire.ReasonKernel}
	}
	n, ok := name(e.pid)
	if !ok {
		// The process exited between the table read and the name read.
		return owner{reason: wire.ReasonProcessGone}
	}
	return owner{pid: int32(e.pid), name: n}
}
