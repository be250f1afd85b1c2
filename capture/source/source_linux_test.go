package source

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
)

// openT opens a source and closes it in t.Cleanup.
func openT(tb testing.TB, device string, opt Options) Source {
	tb.Helper()
	src, err := Open(device, opt)
	if err != nil {
		tb.Fatalf("Open(%q): %v", device, err)
	}
	tb.Cleanup(func() { _ = src.Close() })
	return src
}

// TestVethExactCounts sends a known set of datagrams from a namespace and
// expects every one on the host end, once, with its exact lengths, and no
// kernel drops.
func TestVethExactCounts(t *testing.T) {
	p := newVethPair(t)
	src := openT(t, p.Host, Options{})
	if got := src.LinkType(); got != layers.LinkTypeEthernet {
		t.Fatalf("LinkType = %v, want Ethernet", got)
	}
	const n = 2000
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = 4 + (i*37)%1400 // 4..1403 bytes of payload
	}
	port := 40000 + int(p.HostIP.As4()[2])
	p.sendFromNS(t, port, sizes)

	got := collectUDP(t, src, port, n, 300*time.Millisecond)
	want := make([]frame, n)
	for i, size := range sizes {
		l := 14 + 20 + 8 + size // Ethernet + IPv4 + UDP + payload
		want[i] = frame{CaptureLength: l, Length: l, Payload: size}
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("frames (-got, +want):\n%s", diff)
	}
	st, err := src.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Dropped != 0 || st.Received < n {
		t.Fatalf("Stats = %+v, want Dropped 0 and Received >= %d", st, n)
	}
	t.Logf("kernel stats: %+v", st)
}

// TestSnaplenTruncates checks the socket filter's snaplen: CaptureLength is
// cut, Length keeps the size on the wire.
func TestSnaplenTruncates(t *testing.T) {
	p := newVethPair(t)
	src := openT(t, p.Host, Options{Snaplen: 64})
	port := 41000 + int(p.HostIP.As4()[2])
	p.sendFromNS(t, port, []int{1000, 10})
	got := collectUDP(t, src, port, 2, 100*time.Millisecond)
	want := []frame{{64, 1042, 1000}, {52, 52, 10}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("frames (-got, +want):\n%s", diff)
	}
}

// TestLoopbackOnce: AF_PACKET sees every frame on lo twice (leaving and
// arriving); a Source delivers it once. The control socket without our
// filter shows the doubling, so the test proves the de-duplication rather
// than an absence of it.
func TestLoopbackOnce(t *testing.T) {
	requireRoot(t)
	src := openT(t, "lo", Options{})
	raw, err := afpacket.NewTPacket(afpacket.OptInterface("lo"), afpacket.TPacketVersion3,
		afpacket.OptPollTimeout(50*time.Millisecond), afpacket.OptBlockTimeout(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	control := &afSource{device: "lo", linkType: layers.LinkTypeEthernet, snaplen: 1 << 20,
		fd: socketFD(raw), timeout: 50 * time.Millisecond, tp: raw, stTP: raw}

	const n = 500
	port := freePort(t)
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = 1 + i%200
	}
	if err := sendUDP("127.0.0.1:"+strconv.Itoa(port), sizes); err != nil {
		t.Fatal(err)
	}
	if got := collectUDP(t, src, port, n, 300*time.Millisecond); len(got) != n {
		t.Fatalf("Source on lo delivered %d frames, want %d", len(got), n)
	}
	if got := collectUDP(t, control, port, 2*n, 300*time.Millisecond); len(got) != 2*n {
		t.Fatalf("control socket on lo saw %d frames, want %d (the doubling this package removes)", len(got), 2*n)
	}
	if st, err := src.Stats(); err != nil || st.Dropped != 0 {
		t.Fatalf("Stats = %+v, %v; want no drops", st, err)
	}
}

// TestInterfaceDownAndUp: a link that goes down must not end the capture nor
// make ReadPacketData spin; frames flow again once it is up.
func TestInterfaceDownAndUp(t *testing.T) {
	p := newVethPair(t)
	src := openT(t, p.Host, Options{Timeout: 20 * time.Millisecond})
	run(t, "ip", "link", "set", p.Host, "down")
	start, timeouts := time.Now(), 0
	for time.Since(start) < 300*time.Millisecond {
		_, _, err := src.ReadPacketData()
		switch {
		case errors.Is(err, ErrTimeout):
			timeouts++
		case err != nil:
			t.Fatalf("read while down: %v", err)
		}
	}
	if timeouts > 30 { // 300 ms / 20 ms = 15; a busy loop gives thousands
		t.Fatalf("%d timeouts in 300ms with a 20ms poll timeout: busy loop", timeouts)
	}
	run(t, "ip", "link", "set", p.Host, "up")
	// The peer's carrier comes back asynchronously; give it a moment.
	time.Sleep(200 * time.Millisecond)
	port := 42000 + int(p.HostIP.As4()[2])
	p.sendFromNS(t, port, []int{100, 200, 300})
	if got := collectUDP(t, src, port, 3, 100*time.Millisecond); len(got) != 3 {
		t.Fatalf("after link up got %d frames, want 3", len(got))
	}
}

// TestCloseEndsRead: Close waits for a blocked reader, which then sees EOF;
// Stats keeps working and a second Close is harmless.
func TestCloseEndsRead(t *testing.T) {
	requireRoot(t)
	src, err := Open("lo", Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for {
			if _, _, err := src.ReadPacketData(); err != nil && !errors.Is(err, ErrTimeout) {
				done <- err
				return
			}
		}
	}()
	time.Sleep(30 * time.Millisecond)
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("read after Close: %v, want io.EOF", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("reader still blocked after Close")
	}
	if _, err := src.Stats(); err != nil {
		t.Fatalf("Stats after Close: %v", err)
	}
	if err := src.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestOpenUnknownInterface(t *testing.T) {
	for _, dev := range []string{"nm-nosuch0", ""} {
		_, err := Open(dev, Options{})
		if !errors.Is(err, ErrNoSuchInterface) || !strings.Contains(err.Error(), "no such interface") {
			t.Errorf("Open(%q) = %v, want ErrNoSuchInterface", dev, err)
		}
	}
}

// envPermHelper makes TestHelperOpenUnprivileged run its check.
const envPermHelper = "NETMON_TEST_PERM_HELPER"

// TestHelperOpenUnprivileged is not a test: TestOpenPermission re-execs the
// test binary without CAP_NET_RAW to run it.
func TestHelperOpenUnprivileged(t *testing.T) {
	if os.Getenv(envPermHelper) == "" {
		return // a helper process only: does nothing in a normal run
	}
	_, err := Open("lo", Options{})
	if !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Open without CAP_NET_RAW = %v, want an fs.ErrPermission", err)
	}
	if !strings.Contains(err.Error(), "root") || !strings.Contains(err.Error(), "CAP_NET_RAW") {
		t.Fatalf("error %q does not say root or CAP_NET_RAW is needed", err)
	}
	t.Logf("error text: %v", err)
	ifs, err := Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range ifs {
		if it.CanSniff {
			t.Errorf("interface %s: can_sniff=true without CAP_NET_RAW", it.Name)
		}
	}
}

// TestOpenPermission runs Open as an unprivileged user (nobody) and as root
// without CAP_NET_RAW, both through setpriv.
func TestOpenPermission(t *testing.T) {
	requireRoot(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("setpriv (util-linux) is needed under CI")
		}
		t.Skip("setpriv not installed")
	}
	// nobody cannot enter go test's 0700 build directory: copy the binary.
	dir, err := os.MkdirTemp("", "nmperm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	bin := filepath.Join(dir, "source.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		desc string
		args []string
	}{
		{"user nobody", []string{"--reuid=65534", "--regid=65534", "--clear-groups"}},
		{"root without CAP_NET_RAW", []string{"--inh-caps=-all", "--bounding-set=-net_raw"}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			args := append(tc.args, bin, "-test.run=^TestHelperOpenUnprivileged$", "-test.count=1", "-test.v")
			cmd := exec.Command(setpriv, args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), envPermHelper+"=1")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestHelperOpenUnprivileged") {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			t.Logf("%s", out)
		})
	}
}

func TestInterfaces(t *testing.T) {
	p := newVethPair(t)
	ifs, err := Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Interface{}
	for _, it := range ifs {
		byName[it.Name] = it
	}
	lo, ok := byName["lo"]
	if !ok || !lo.Loopback || !lo.Up || !lo.CanSniff || !slices.Contains(lo.Addresses, "127.0.0.1/8") {
		t.Errorf("lo = %+v, want loopback, up, can_sniff, 127.0.0.1/8", lo)
	}
	h, ok := byName[p.Host]
	want := Interface{Name: p.Host, HWAddr: p.HostMAC.String(), MTU: 1500, Up: true, CanSniff: true}
	if !ok || h.Name != want.Name || h.HWAddr != want.HWAddr || h.MTU != want.MTU ||
		h.Up != want.Up || h.Loopback || h.CanSniff != want.CanSniff ||
		!slices.Contains(h.Addresses, p.HostIP.String()+"/30") {
		t.Errorf("%s = %+v, want %+v with address %s/30", p.Host, h, want, p.HostIP)
	}
	// A down interface is still sniffable (see Interface.CanSniff).
	run(t, "ip", "link", "set", p.Host, "down")
	ifi, _ := net.InterfaceByName(p.Host)
	if !canSniff(*ifi) {
		t.Errorf("can_sniff of a down interface = false, want true")
	}
}
