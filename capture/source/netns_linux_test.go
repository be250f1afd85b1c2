package source

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// requireRoot skips a test that needs root, except under CI=true where CI
// runs as root and a skip would hide a broken capture.
func requireRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatal("capture tests need root; CI must run them as root")
	}
	tb.Skip("capture tests need root")
}

// vethPair is a veth pair with one end (Host) in this network namespace and
// the other (Peer) in a namespace of its own.
type vethPair struct {
	NS, Host, Peer   string
	HostIP, PeerIP   netip.Addr
	HostMAC, PeerMAC net.HardwareAddr
}

// run runs a command and fails the test with its output on error.
func run(tb testing.TB, name string, args ...string) string {
	tb.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newVethPair creates a namespace nmtest-<random> and a veth pair between it
// and this namespace, addressed 10.X.Y.1/30 (here) and 10.X.Y.2/30 (there),
// both up. Everything is removed in t.Cleanup, also when the test fails.
func newVethPair(tb testing.TB) *vethPair {
	tb.Helper()
	requireRoot(tb)
	var r [4]byte
	_, _ = rand.Read(r[:])
	id := hex.EncodeToString(r[:3])
	x, y := 200+r[3]%50, r[0]&0xfc // 10.200-249.y.0/30
	p := &vethPair{
		NS:     "nmtest-" + id,
		Host:   "nmh" + id,
		Peer:   "nmn" + id,
		HostIP: netip.AddrFrom4([4]byte{10, x, y, 1}),
		PeerIP: netip.AddrFrom4([4]byte{10, x, y, 2}),
	}
	run(tb, "ip", "netns", "add", p.NS)
	tb.Cleanup(func() { _ = exec.Command("ip", "netns", "del", p.NS).Run() })
	run(tb, "ip", "link", "add", p.Host, "type", "veth", "peer", "name", p.Peer, "netns", p.NS)
	tb.Cleanup(func() { _ = exec.Command("ip", "link", "del", p.Host).Run() })
	run(tb, "ip", "addr", "add", p.HostIP.String()+"/30", "dev", p.Host)
	run(tb, "ip", "link", "set", p.Host, "up")
	run(tb, "ip", "-n", p.NS, "addr", "add", p.PeerIP.String()+"/30", "dev", p.Peer)
	run(tb, "ip", "-n", p.NS, "link", "set", p.Peer, "up")
	run(tb, "ip", "-n", p.NS, "link", "set", "lo", "up")
	ifi, err := net.InterfaceByName(p.Host)
	if err != nil {
		tb.Fatal(err)
	}
	p.HostMAC = ifi.HardwareAddr
	out := run(tb, "ip", "netns", "exec", p.NS, "cat", "/sys/class/net/"+p.Peer+"/address")
	if p.PeerMAC, err = net.ParseMAC(strings.TrimSpace(out)); err != nil {
		tb.Fatal(err)
	}
	return p
}

// Environment of the sender helper process.
const (
	envSendTo    = "NETMON_TEST_SEND_TO"    // ip:port
	envSendSizes = "NETMON_TEST_SEND_SIZES" // comma-separated payload sizes
)

// TestHelperSender is not a test: newVethPair's tests re-exec the test
// binary inside the namespace to run it. It sends one UDP datagram per size
// in NETMON_TEST_SEND_SIZES to NETMON_TEST_SEND_TO.
func TestHelperSender(t *testing.T) {
	to := os.Getenv(envSendTo)
	if to == "" {
		return // a helper process only: does nothing in a normal run
	}
	var sizes []int
	for f := range strings.SplitSeq(os.Getenv(envSendSizes), ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
	}
	if err := sendUDP(to, sizes); err != nil {
		t.Fatal(err)
	}
}

// sendUDP sends one datagram per size to addr (the first four bytes carry
// its index), pausing briefly every 100
// datagrams so a burst never overflows the receiving CPU's backlog queue
// (netdev_max_backlog) before the capture socket sees it.
func sendUDP(addr string, sizes []int) error {
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return err
	}
	// Unconnected, so the ICMP port-unreachable answers (nothing listens)
	// do not fail later writes with ECONNREFUSED.
	c, err := net.ListenUDP("udp", nil)
	if err != nil {
		return err
	}
	defer c.Close()
	buf := make([]byte, 65507)
	for i, n := range sizes {
		binary.BigEndian.PutUint32(buf, uint32(i))
		if _, err := c.WriteToUDP(buf[:n], to); err != nil {
			return fmt.Errorf("datagram %d: %w", i, err)
		}
		if i%100 == 99 {
			time.Sleep(time.Millisecond)
		}
	}
	return nil
}

// sendFromNS sends the datagrams from inside the pair's namespace.
func (p *vethPair) sendFromNS(tb testing.TB, port int, sizes []int) {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	ss := make([]string, len(sizes))
	for i, n := range sizes {
		ss[i] = strconv.Itoa(n)
	}
	cmd := exec.Command("ip", "netns", "exec", p.NS, exe, "-test.run=^TestHelperSender$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		envSendTo+"="+netip.AddrPortFrom(p.HostIP, uint16(port)).String(),
		envSendSizes+"="+strings.Join(ss, ","))
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("sender in %s: %v\n%s", p.NS, err, out)
	}
}

// frame is what the tests keep of a captured UDP frame.
type frame struct {
	CaptureLength, Length, Payload int
}

// collectUDP reads src until want frames to dstPort arrived (then for
// another quiet period, to catch extras) or the deadline passed. Frames of
// other traffic (ARP, IPv6 neighbour discovery, other tests) are ignored.
func collectUDP(tb testing.TB, src Source, dstPort, want int, quiet time.Duration) []frame {
	tb.Helper()
	var got []frame
	deadline := time.Now().Add(10 * time.Second)
	var doneAt time.Time
	for time.Now().Before(deadline) {
		if doneAt.IsZero() && len(got) >= want {
			doneAt = time.Now()
		}
		if !doneAt.IsZero() && time.Since(doneAt) > quiet {
			break
		}
		data, ci, err := src.ReadPacketData()
		if errors.Is(err, ErrTimeout) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			tb.Fatalf("read: %v", err)
		}
		pkt := gopacket.NewPacket(data, src.LinkType(), gopacket.NoCopy)
		udp, ok := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if !ok || int(udp.DstPort) != dstPort {
			continue
		}
		got = append(got, frame{ci.CaptureLength, ci.Length, int(udp.Length) - 8})
	}
	return got
}

// freePort returns a UDP port nothing listens on right now.
func freePort(tb testing.TB) int {
	tb.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}
