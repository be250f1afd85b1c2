//go:build !linux

package udpsock

import "net"

// SetReadBuffer asks for a socket receive buffer of size bytes; the
// granted size is not read back on this platform.
func SetReadBuffer(conn *net.UDPConn, size int) int {
	_ = conn.SetReadBuffer(size)
	return 0
}

// Inode is unknown outside Linux.
func Inode(*net.UDPConn) uint64 { return 0 }

// KernelDrops is not readable outside Linux (no /proc/net/udp).
func KernelDrops(uint64) uint64 { return 0 }
