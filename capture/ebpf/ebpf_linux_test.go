package ebpf

import (
	"io"
	"net"
	"os"
	"strings"
	"testing"
)

// needRoot fails under CI=true (the CI runs as root), skips otherwise.
func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("the eBPF tests need root (CAP_BPF and CAP_PERFMON)")
	}
	t.Skip("needs root")
}

func start(t testing.TB) *Accountant {
	t.Helper()
	needRoot(t)
	a, err := Start()
	if err != nil {
		t.Fatal(err) // root on a kernel with BTF: it must start
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	})
	return a
}

// sumFor adds the flows of this process between local and remote.
func sumFor(d Delta, proto uint8, local, remote string) Counters {
	var c Counters
	for _, f := range d.Flows {
		if f.PID == int32(os.Getpid()) && f.Proto == proto && f.Local.String() == local && f.Remote.String() == remote {
			c.BytesIn += f.BytesIn
			c.BytesOut += f.BytesOut
			c.CallsIn += f.CallsIn
			c.CallsOut += f.CallsOut
		}
	}
	return c
}

// This test process's own sockets, on loopback, IPv4 and IPv6: exact
// bytes and calls on both ends, then deltas (a second Read without
// traffic is zero).
func TestTCPExactBytes(t *testing.T) {
	a := start(t)
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(addr, func(t *testing.T) { tcpExact(t, a, addr) })
	}
}

func tcpExact(t *testing.T, a *Accountant, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const n = 1_000_003
	done := make(chan int64)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- -1
			return
		}
		got, _ := io.Copy(io.Discard, c)
		c.Close()
		done <- got
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, n)
	if _, err := c.Write(buf); err != nil { // one write call
		t.Fatal(err)
	}
	c.Close()
	if got := <-done; got != n {
		t.Fatalf("server read %d", got)
	}
	d, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	cl := sumFor(d, 6, c.LocalAddr().String(), ln.Addr().String())
	if cl.BytesOut != n || cl.BytesIn != 0 || cl.CallsOut != 1 {
		t.Fatalf("client side %+v, want %d bytes out in one call", cl, n)
	}
	sv := sumFor(d, 6, ln.Addr().String(), c.LocalAddr().String())
	if sv.BytesIn != n || sv.BytesOut != 0 {
		t.Fatalf("server side %+v, want %d bytes in", sv, n)
	}
	for _, f := range d.Flows {
		if f.PID == int32(os.Getpid()) && !strings.HasPrefix("ebpf.test", f.Comm) {
			t.Fatalf("comm %q", f.Comm)
		}
	}
	d, err = a.Read()
	if err != nil {
		t.Fatal(err)
	}
	if c := sumFor(d, 6, c.LocalAddr().String(), ln.Addr().String()); !c.Zero() {
		t.Fatalf("second read not a delta: %+v", c)
	}
}

// UDP over IPv6 loopback, connected client and unconnected server.
func TestUDPv6(t *testing.T) {
	a := start(t)
	srv, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := net.Dial("udp6", srv.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 1200)
	for range 10 {
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
		if _, _, err := srv.ReadFrom(buf); err != nil {
			t.Fatal(err)
		}
	}
	d, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	cl := sumFor(d, 17, c.LocalAddr().String(), srv.LocalAddr().String())
	if cl.BytesOut != 12000 || cl.CallsOut != 10 {
		t.Fatalf("client %+v", cl)
	}
	// The server socket is not connected: no remote end.
	sv := sumFor(d, 17, srv.LocalAddr().String(), "[::]:0")
	if sv.BytesIn != 12000 || sv.CallsIn != 10 {
		t.Fatalf("server %+v; flows %+v", sv, d.Flows)
	}
}

// sendfile(2) (Go's TCPConn.ReadFrom from a file) reaches the tracepoint
// through splice_to_socket: counted like write.
func TestSendfileCounted(t *testing.T) {
	a := start(t)
	f, err := os.CreateTemp(t.TempDir(), "body")
	if err != nil {
		t.Fatal(err)
	}
	const n = 2_500_000
	if _, err := f.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan int64)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- -1
			return
		}
		got, _ := io.Copy(io.Discard, c)
		c.Close()
		done <- got
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if w, err := c.(*net.TCPConn).ReadFrom(f); err != nil || w != n {
		t.Fatalf("sendfile %d %v", w, err)
	}
	c.Close()
	if got := <-done; got != n {
		t.Fatalf("server read %d", got)
	}
	d, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	if cl := sumFor(d, 6, c.LocalAddr().String(), ln.Addr().String()); cl.BytesOut != n {
		t.Fatalf("sent with sendfile: %+v, want %d bytes out", cl, n)
	}
}
