package proc

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestListSeesOwnSocket opens a listener and a connection to it and finds
// both, with this process's PID and name.
func TestListSeesOwnSocket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	conns, err := NewLister().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	me := int32(os.Getpid())
	exe, _ := os.Executable()
	var listen, established bool
	for _, k := range conns {
		if k.PID != me {
			continue
		}
		if k.Process == "" || (len(k.Process) < 15 && k.Process != filepath.Base(exe)) {
			t.Errorf("process name %q, want %q", k.Process, filepath.Base(exe))
		}
		switch {
		case k.LocalAddr == ln.Addr().String() && k.Status == "LISTEN" && k.RemoteAddr == "":
			listen = true
		case k.LocalAddr == c.LocalAddr().String() && k.RemoteAddr == ln.Addr().String() && k.Status == "ESTABLISHED" && k.Proto == "tcp":
			established = true
		}
	}
	if !listen || !established {
		t.Fatalf("own sockets not found (listen %v, established %v) among %d", listen, established, len(conns))
	}
}

func TestProtoName(t *testing.T) {
	for _, tt := range []struct {
		fam, typ uint32
		want     string
	}{{2, 1, "tcp"}, {10, 1, "tcp6"}, {2, 2, "udp"}, {10, 2, "udp6"}} {
		if got := protoName(tt.fam, tt.typ); got != tt.want {
			t.Errorf("protoName(%d,%d) = %s, want %s", tt.fam, tt.typ, got, tt.want)
		}
	}

}
