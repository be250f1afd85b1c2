package attr

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"golang.org/x/sys/unix"
)

// Sizes of the sock_diag structures (linux/inet_diag.h).
const (
	nlmsgHdrLen     = 16
	inetDiagReqLen  = 56 // inet_diag_req_v2
	inetDiagMsgLen  = 72 // inet_diag_msg
	diagAllStates   = 0xffffffff
	diagRecvBufSize = 1 << 16
)

// diagSockets lists the TCP and UDP sockets of the calling thread's
// network namespace through NETLINK_SOCK_DIAG, the interface ss(8) uses.
// Unlike /proc/net/tcp, which walks the kernel's global hash tables in
// page-sized reads and can miss a socket while other namespaces churn, it
// is scoped to our namespace and answers in one dump per table.
func diagSockets() ([]sockEntry, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return nil, fmt.Errorf("sock_diag bind: %w", err)
	}
	var out []sockEntry
	buf := make([]byte, diagRecvBufSize)
	seq := uint32(0)
	for _, fam := range [...]uint8{unix.AF_INET, unix.AF_INET6} {
		for _, proto := range [...]uint8{protoTCP, protoUDP} {
			seq++
			req := make([]byte, nlmsgHdrLen+inetDiagReqLen)
			binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
			binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
			binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
			binary.NativeEndian.PutUint32(req[8:], seq)
			req[16], req[17] = fam, proto
			binary.NativeEndian.PutUint32(req[20:], diagAllStates)
			if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
				return nil, fmt.Errorf("sock_diag send: %w", err)
			}
			if out, err = diagRead(fd, buf, proto, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// diagRead reads the answers to one dump request.
func diagRead(fd int, buf []byte, proto uint8, out []sockEntry) ([]sockEntry, error) {
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("sock_diag receive: %w", err)
		}
		b := buf[:n]
		for len(b) >= nlmsgHdrLen {
			l := int(binary.NativeEndian.Uint32(b[0:]))
			typ := binary.NativeEndian.Uint16(b[4:])
			if l < nlmsgHdrLen || l > len(b) {
				return out, errors.New("sock_diag: bad message length")
			}
			msg := b[nlmsgHdrLen:l]
			b = b[min(len(b), (l+3)&^3):]
			switch typ {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(msg) >= 4 {
					if e := int32(binary.NativeEndian.Uint32(msg)); e != 0 {
						if unix.Errno(-e) == unix.ENOENT { // no such table (no IPv6, no module)
							return out, nil
						}
						return out, fmt.Errorf("sock_diag: %w", unix.Errno(-e))
					}
				}
				return out, nil
			case unix.SOCK_DIAG_BY_FAMILY:
				if e, ok := parseDiagMsg(msg, proto); ok {
					out = append(out, e)
				}
			}
		}
	}
}

// parseDiagMsg decodes an inet_diag_msg: ports and addresses in network
// order, inode in host order.
func parseDiagMsg(m []byte, proto uint8) (sockEntry, bool) {
	if len(m) < inetDiagMsgLen {
		return sockEntry{}, false
	}
	fam, state := m[0], m[1]
	sport := binary.BigEndian.Uint16(m[4:])
	dport := binary.BigEndian.Uint16(m[6:])
	var src, dst netip.Addr
	if fam == unix.AF_INET {
		src = netip.AddrFrom4([4]byte(m[8:12]))
		dst = netip.AddrFrom4([4]byte(m[24:28]))
	} else {
		src = netip.AddrFrom16([16]byte(m[8:24])).Unmap()
		dst = netip.AddrFrom16([16]byte(m[24:40])).Unmap()
	}
	inode := binary.NativeEndian.Uint32(m[68:])
	return sockEntry{proto: proto, local: netip.AddrPortFrom(src, sport), remote: netip.AddrPortFrom(dst, dport),
		state: int(state), inode: uint64(inode)}, true
}
