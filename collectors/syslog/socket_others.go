//go:build !linux

package syslog

import "net"

// setReadBuffer asks for a socket receive buffer of size bytes; the
// granted size is not read back on this platform.
func setReadBuffer(conn *net.UDPConn, size int) int {
	_ = conn.SetReadBuffer(size)
	return 0
}

// socketInode is unknown outside Linux.
func socketInode(*net.UDPConn) uint64 { return 0 }

// kernelDrops is not readable outside Linux (no /proc/net/udp).
func kernelDrops(uint64) uint64 { return 0 }
