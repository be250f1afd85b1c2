package ebpf

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	cebpf "github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// More sockets than the per-CPU cache has ways (256), used in turns, so
// entries are evicted and refilled on every round, many sockets sharing
// a way: every socket's bytes and calls still exact, and a second
// round after the first Read adds exactly the second round's.
func TestCacheEvictionExact(t *testing.T) {
	a := start(t)
	srv, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const socks, rounds = 600, 3
	clients := make([]net.Conn, socks)
	for i := range clients {
		if clients[i], err = net.Dial("udp4", srv.LocalAddr().String()); err != nil {
			t.Fatal(err)
		}
		defer clients[i].Close()
	}
	buf := make([]byte, 2048)
	send := func() {
		for r := range rounds {
			for i, c := range clients {
				// Socket i sends 100+i%1000 bytes each round.
				if _, err := c.Write(buf[:100+i%1000]); err != nil {
					t.Fatal(err)
				}
				if _, _, err := srv.ReadFrom(buf); err != nil {
					t.Fatalf("round %d socket %d: %v", r, i, err)
				}
			}
		}
	}
	check := func(d Delta) {
		t.Helper()
		var in uint64
		for i, c := range clients {
			got := sumFor(d, 17, c.LocalAddr().String(), srv.LocalAddr().String())
			want := Counters{BytesOut: uint64(rounds * (100 + i%1000)), CallsOut: rounds}
			if got != want {
				t.Errorf("socket %d: %+v, want %+v", i, got, want)
			}
			in += want.BytesOut
		}
		sv := sumFor(d, 17, srv.LocalAddr().String(), "0.0.0.0:0")
		if sv.BytesIn != in || sv.CallsIn != socks*rounds {
			t.Errorf("server %+v, want %d bytes in %d calls", sv, in, socks*rounds)
		}
	}
	send()
	check(read(t, a))
	send()
	check(read(t, a))
}

// A program the verifier refuses comes back as the verifier's reason,
// not as a missing privilege: the kernel refuses both with EACCES.
func TestLoadErrorNamesTheVerifier(t *testing.T) {
	needRoot(t)
	// Reads R2, which the program never set: refused by the verifier.
	_, err := cebpf.NewProgram(&cebpf.ProgramSpec{
		Type:    cebpf.SocketFilter,
		License: "GPL",
		Instructions: asm.Instructions{
			asm.LoadMem(asm.R0, asm.R2, 0, asm.DWord),
			asm.Return(),
		},
	})
	if err == nil {
		t.Fatal("the kernel loaded a program that reads an unset register")
	}
	if !errors.Is(err, unix.EACCES) {
		t.Fatalf("the kernel refused with %v, the test expects EACCES", err)
	}
	got := loadError(err).Error()
	want := fmt.Sprintf("ebpf: kernel %s refused the programs: ", release())
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "R2 !read_ok") {
		t.Fatalf("loadError = %q, want %q... naming R2 !read_ok", got, want)
	}
	for _, err := range []error{fmt.Errorf("load program: %w", unix.EPERM), fmt.Errorf("load program: %w", unix.EACCES)} {
		if got := loadError(err).Error(); got != "ebpf: needs CAP_BPF and CAP_PERFMON, or root" {
			t.Errorf("loadError(%v) = %q", err, got)
		}
	}
	if got := loadError(errors.New("map create: invalid argument")).Error(); got != "ebpf: loading the programs: map create: invalid argument" {
		t.Errorf("other error: %q", got)
	}
}
