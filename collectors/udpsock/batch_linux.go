package udpsock

import (
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BatchReader reads up to len(bufs) datagrams a call with recvmmsg(2),
// through the runtime's poller (a read that would block parks the
// goroutine). Its message headers, iovecs and address buffers are
// allocated once: golang.org/x/net's ReadBatch, which it replaces, packed
// them and parsed a net.UDPAddr for every datagram, a tenth of the flow
// collector's CPU at 85 000 datagrams/s.
type BatchReader struct {
	rc    syscall.RawConn
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrInet6 // room for either family
}

// NewBatchReader returns a reader of conn for batches of up to size.
func NewBatchReader(conn *net.UDPConn, size int) (*BatchReader, error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &BatchReader{rc: rc, hdrs: make([]unix.Mmsghdr, size), iovs: make([]unix.Iovec, size),
		names: make([]unix.RawSockaddrInet6, size)}, nil
}

// Read fills bufs with datagrams, at least one, and describes each in
// msgs; it returns how many. A closed connection gives net.ErrClosed.
func (r *BatchReader) Read(bufs [][]byte, msgs []Msg) (int, error) {
	n := min(len(bufs), len(msgs), len(r.hdrs))
	for i := range n {
		r.iovs[i].Base = unsafe.SliceData(bufs[i])
		r.iovs[i].SetLen(len(bufs[i]))
		r.hdrs[i] = unix.Mmsghdr{}
		h := &r.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&r.names[i]))
		h.Namelen = unix.SizeofSockaddrInet6
		h.Iov = &r.iovs[i]
		h.SetIovlen(1)
	}
	var got int
	var serr error
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			m, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.hdrs[0])), uintptr(n), 0, 0, 0)
			switch e {
			case 0:
				got = int(m)
				return true
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false // wait until readable
			default:
				serr = e
				return true
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, serr
	}
	for i := range got {
		msgs[i] = Msg{N: int(r.hdrs[i].Len), Addr: sockaddrAddr(&r.names[i]), Truncated: r.hdrs[i].Hdr.Flags&unix.MSG_TRUNC != 0}
	}
	return got, nil
}

// sockaddrAddr is the address of a sockaddr_in or sockaddr_in6, with
// IPv4-mapped IPv6 addresses unmapped.
func sockaddrAddr(sa *unix.RawSockaddrInet6) netip.Addr {
	switch sa.Family {
	case unix.AF_INET:
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrFrom4(sa4.Addr)
	case unix.AF_INET6:
		return netip.AddrFrom16(sa.Addr).Unmap()
	}
	return netip.Addr{}
}
