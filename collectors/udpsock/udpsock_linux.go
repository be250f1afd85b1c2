// Package udpsock holds the socket details the UDP collectors share: a
// large receive buffer (SO_RCVBUFFORCE as root, past net.core.rmem_max)
// and the kernel's drop count of a socket, read from /proc/net/udp by the
// socket's inode, so "the kernel dropped datagrams" is a metric rather
// than a guess. A leaf: standard library and x/sys only.
package udpsock

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// SetReadBuffer asks for a socket receive buffer of size bytes and returns
// what the kernel granted (it reports twice the usable size). SO_RCVBUF
// is capped by net.core.rmem_max (4 MiB on the test machines), so as root
// SO_RCVBUFFORCE is tried first; without the privilege it fails and the
// capped value stays.
func SetReadBuffer(conn *net.UDPConn, size int) int {
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0
	}
	got := 0
	_ = rc.Control(func(fd uintptr) {
		if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, size) != nil {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, size)
		}
		got, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
	})
	return got
}

// Inode returns the inode of conn's socket, the key of its line in
// /proc/net/udp; 0 when unknown.
func Inode(conn *net.UDPConn) uint64 {
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0
	}
	var ino uint64
	_ = rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil {
			ino = st.Ino
		}
	})
	return ino
}

// KernelDrops returns the drops column of the socket whose inode is ino,
// from /proc/net/udp or /proc/net/udp6; 0 when not found.
func KernelDrops(ino uint64) uint64 {
	if ino == 0 {
		return 0
	}
	want := []byte(strconv.FormatUint(ino, 10))
	for _, path := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		s := bufio.NewScanner(f)
		for s.Scan() {
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
			fields := bytes.Fields(s.Bytes())
			if len(fields) >= 13 && bytes.Equal(fields[9], want) {
				f.Close()
				n, _ := strconv.ParseUint(string(fields[12]), 10, 64)
				return n
			}
		}
		f.Close()
	}
	return 0
}
