package udpsock

import (
	"net"
	"testing"
	"time"
)

// TestKernelDrops overflows a small socket buffer nobody reads and checks
// that the drops column is found for the socket's inode, so the zero the
// other tests assert is a real reading.
func TestKernelDrops(t *testing.T) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetReadBuffer(4096); err != nil {
		t.Fatal(err)
	}
	ino := Inode(conn)
	if ino == 0 {
		t.Fatal("no inode for the socket")
	}
	out, err := net.DialUDP("udp", nil, conn.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	msg := make([]byte, 1000)
	for range 200 {
		if _, err := out.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for KernelDrops(ino) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("kernelDrops stayed 0 after 200 datagrams into a 4 KiB buffer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("kernel drops: %d", KernelDrops(ino))
}
