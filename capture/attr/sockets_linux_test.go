package attr

import (
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
)

func TestParseSockLine(t *testing.T) {
	for _, tc := range []struct {
		desc, line string
		proto      uint8
		want       sockEntry
		ok         bool
	}{
		{"ipv4 listen", "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 100 0 0 10 0",
			protoTCP, sockEntry{protoTCP, netip.MustParseAddrPort("127.0.0.1:8080"), netip.MustParseAddrPort("0.0.0.0:0"), 10, 12345, 0}, true},
		{"ipv4 established", "   1: 0102000A:A0B4 0202000A:01BB 01 00000000:00000000 00:00000000 00000000  1000        0 777 1",
			protoTCP, sockEntry{protoTCP, netip.MustParseAddrPort("10.0.2.1:41140"), netip.MustParseAddrPort("10.0.2.2:443"), 1, 777, 0}, true},
		{"ipv6 v4-mapped", "   2: 0000000000000000FFFF00000100007F:0035 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 9 2",
			protoUDP, sockEntry{protoUDP, netip.MustParseAddrPort("127.0.0.1:53"), netip.MustParseAddrPort("[::]:0"), 7, 9, 0}, true},
		{"short", "0: 0100007F:1F90", protoTCP, sockEntry{}, false},
		{"bad hex", "   0: 0100007G:1F90 00000000:0000 0A 0:0 0:0 0 0 0 1 1", protoTCP, sockEntry{}, false},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got, ok := parseSockLine([]byte(tc.line), tc.proto)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("got %+v %v, want %+v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestSocketTablesAgree opens a listener and a connection in the test's
// own namespace: sock_diag and /proc/net must both list them with the same
// inode, and lookup must name this process as their owner.
func TestSocketTablesAgree(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	local := netip.MustParseAddrPort(c.LocalAddr().String())
	remote := netip.MustParseAddrPort(c.RemoteAddr().String())
	key := flowKey{protoTCP, local, remote}

	find := func(entries []sockEntry) sockEntry {
		for _, e := range entries {
			if e.proto == protoTCP && e.local == local && e.remote == remote {
				return e
			}
		}
		return sockEntry{}
	}
	diag, err := diagSockets()
	if err != nil {
		t.Fatal(err)
	}
	proc, err := procSockTables("/proc")
	if err != nil {
		t.Fatal(err)
	}
	d, p := find(diag), find(proc)
	if d.inode == 0 || d != p {
		t.Fatalf("sock_diag %+v, /proc/net %+v", d, p)
	}

	s := newProcSockets()
	start := time.Now()
	match, err := s.lookup([]flowKey{key})
	if err != nil {
		t.Fatal(err)
	}
	o, ok := match(key)
	if !ok || o.pid != int32(os.Getpid()) || o.name == "" {
		t.Fatalf("owner %+v %v, want pid %d", o, ok, os.Getpid())
	}
	// The accepted side is found through the listener when its own
	// socket is not in the tables yet; here it is, exactly.
	if o2, ok := match(flowKey{protoTCP, remote, local}); !ok || o2.pid != int32(os.Getpid()) {
		t.Fatalf("server side %+v %v", o2, ok)
	}
	t.Logf("lookup took %v", time.Since(start))
}
