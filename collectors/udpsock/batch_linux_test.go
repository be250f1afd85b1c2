package udpsock

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

// readN reads until want datagrams arrived (or a deadline passes).
func readN(t *testing.T, r *BatchReader, bufs [][]byte, want int) ([]Msg, [][]byte) {
	t.Helper()
	var msgs []Msg
	var data [][]byte
	deadline := time.Now().Add(5 * time.Second)
	for len(msgs) < want && time.Now().Before(deadline) {
		ms := make([]Msg, len(bufs))
		n, err := r.Read(bufs, ms)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			msgs = append(msgs, ms[i])
			data = append(data, append([]byte(nil), bufs[i][:ms[i].N]...))
		}
	}
	return msgs, data
}

func TestBatchReader(t *testing.T) {
	for _, tt := range []struct {
		listen, from string
		want         netip.Addr
	}{
		{"127.0.0.1:0", "127.0.0.1:0", netip.MustParseAddr("127.0.0.1")},
		{"[::]:0", "127.0.0.1:0", netip.MustParseAddr("127.0.0.1")}, // v4-mapped, unmapped
		{"[::1]:0", "[::1]:0", netip.MustParseAddr("::1")},
	} {
		t.Run(tt.listen+"<-"+tt.from, func(t *testing.T) {
			conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(tt.listen)))
			if err != nil {
				t.Fatalf("listen %s: %v", tt.listen, err)
			}
			defer conn.Close()
			r, err := NewBatchReader(conn, 8)
			if err != nil {
				t.Fatal(err)
			}
			to := netip.AddrPortFrom(tt.want, uint16(conn.LocalAddr().(*net.UDPAddr).Port))
			src, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(tt.from)))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			for i := range 12 {
				if _, err := src.WriteToUDPAddrPort([]byte(fmt.Sprintf("datagram %02d", i)), to); err != nil {
					t.Fatal(err)
				}
			}
			bufs := make([][]byte, 8)
			for i := range bufs {
				bufs[i] = make([]byte, 2048)
			}
			msgs, data := readN(t, r, bufs, 12)
			if len(msgs) != 12 {
				t.Fatalf("read %d datagrams, want 12", len(msgs))
			}
			for i, m := range msgs {
				if m.Addr != tt.want || m.N != 11 || m.Truncated || string(data[i]) != fmt.Sprintf("datagram %02d", i) {
					t.Errorf("datagram %d: %+v %q", i, m, data[i])
				}
			}
		})
	}
}

func TestBatchReaderTruncatedAndClosed(t *testing.T) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewBatchReader(conn, 4)
	if err != nil {
		t.Fatal(err)
	}
	src, err := net.DialUDP("udp", nil, conn.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.Write([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	msgs, data := readN(t, r, [][]byte{make([]byte, 4)}, 1)
	if len(msgs) != 1 || !msgs[0].Truncated || msgs[0].N != 4 || string(data[0]) != "0123" {
		t.Errorf("got %+v %q, want 4 bytes marked truncated", msgs, data)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Read([][]byte{make([]byte, 64)}, make([]Msg, 1))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // let it block in the poller
	conn.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read after close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a blocked read did not return when the socket closed")
	}
}
