package capture

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// The live test: a network namespace joined to the host by a veth pair,
// point-to-point with public-looking addresses (so traffic has a
// direction: the host end's own address against a remote one outside its
// networks). The host captures on its end through the capture component;
// a sender re-executed inside the namespace sends a known set of packets.
const (
	liveHostIP = "203.0.113.1"
	livePeerIP = "198.51.100.2"
	liveUDPs   = 100 // datagrams of liveUDPLen payload bytes to port 9999
	liveUDPLen = 200
	liveSYNs   = 20 // connects to closed port 9998: SYN in, RST out each
)

// dnsResponse is the DNS answer the peer sends: peer.example.test is its
// own address, so its endpoint gets that hostname.
func liveDNSResponse(t testing.TB, id uint16) []byte {
	dns := &layers.DNS{
		ID: id, QR: true, OpCode: layers.DNSOpCodeQuery, RD: true, RA: true,
		Questions: []layers.DNSQuestion{{Name: []byte("peer.example.test"), Type: layers.DNSTypeA, Class: layers.DNSClassIN}},
		Answers: []layers.DNSResourceRecord{{Name: []byte("peer.example.test"), Type: layers.DNSTypeA, Class: layers.DNSClassIN,
			TTL: 60, IP: net.ParseIP(livePeerIP).To4()}},
	}
	buf := gopacket.NewSerializeBuffer()
	if err := dns.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func liveDNSQuery(t testing.TB) []byte {
	dns := &layers.DNS{ID: 7, RD: true, Questions: []layers.DNSQuestion{{Name: []byte("www.example.test"), Type: layers.DNSTypeA, Class: layers.DNSClassIN}}}
	buf := gopacket.NewSerializeBuffer()
	if err := dns.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestNetnsSender runs inside the namespace (re-executed by TestLiveVeth).
func TestNetnsSender(t *testing.T) {
	if os.Getenv("NETMON_NETNS_SENDER") != "1" {
		return
	}
	udp, err := net.Dial("udp4", liveHostIP+":9999")
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, liveUDPLen)
	for range liveUDPs {
		if _, err := udp.Write(payload); err != nil {
			t.Fatal(err)
		}
	}
	udp.Close()
	for range liveSYNs {
		c, err := net.DialTimeout("tcp4", liveHostIP+":9998", 2*time.Second)
		if err == nil {
			c.Close()
			t.Fatal("port 9998 is open on the host")
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("connect: %v", err)
		}
	}
	// Three answers from port 53, one query to port 53.
	src := &net.UDPAddr{IP: net.ParseIP(livePeerIP), Port: 53}
	resp, err := net.DialUDP("udp4", src, &net.UDPAddr{IP: net.ParseIP(liveHostIP), Port: 20002})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := resp.Write(liveDNSResponse(t, uint16(100+i))); err != nil {
			t.Fatal(err)
		}
	}
	resp.Close()
	q, err := net.Dial("udp4", liveHostIP+":53")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Write(liveDNSQuery(t)); err != nil {
		t.Fatal(err)
	}
	q.Close()
}

func ipCmd(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// liveVeth makes the namespace and the veth pair and returns the
// namespace and the host end's name; everything is removed at cleanup.
func liveVeth(t testing.TB) (ns, vh string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the live capture tests need root in CI")
		}
		t.Skip("needs root (network namespaces, AF_PACKET)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("iproute2 (ip) is required")
	}
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	tag := hex.EncodeToString(rnd[:])
	ns, vh, vn := "nmcap-"+tag, "nmh"+tag, "nmn"+tag
	ipCmd(t, "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ipCmd(t, "link", "add", vh, "type", "veth", "peer", "name", vn, "netns", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", vh).Run() })
	// No IPv6 on the pair: no router solicitations or MLD reports in the counts.
	for _, cmd := range [][]string{
		{"sysctl", "-qw", "net.ipv6.conf." + vh + ".disable_ipv6=1"},
		{"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf." + vn + ".disable_ipv6=1"},
	} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", cmd, err, out)
		}
	}
	ipCmd(t, "addr", "add", liveHostIP+"/32", "dev", vh)
	ipCmd(t, "link", "set", vh, "up")
	ipCmd(t, "route", "add", livePeerIP+"/32", "dev", vh)
	ipCmd(t, "-n", ns, "addr", "add", livePeerIP+"/32", "dev", vn)
	ipCmd(t, "-n", ns, "link", "set", vn, "up")
	ipCmd(t, "-n", ns, "link", "set", "lo", "up")
	ipCmd(t, "-n", ns, "route", "add", liveHostIP+"/32", "dev", vn)
	return ns, vh
}

func TestLiveVeth(t *testing.T) {
	ns, vh := liveVeth(t)

	// Host listeners absorb the datagrams (no ICMP port unreachable).
	for _, addr := range []string{liveHostIP + ":9999", liveHostIP + ":20002", liveHostIP + ":53"} {
		l, err := net.ListenPacket("udp4", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
	}

	c := New(slog.New(slog.DiscardHandler), DefaultConfig(), Deps{})
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if err := c.StartCapture(vh); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)

	sender := exec.Command("ip", "netns", "exec", ns, os.Args[0], "-test.run=^TestNetnsSender$", "-test.count=1")
	sender.Env = append(os.Environ(), "NETMON_NETNS_SENDER=1")
	if out, err := sender.CombinedOutput(); err != nil {
		t.Fatalf("sender: %v\n%s", err, out)
	}

	var s Snapshot
	deadline := time.Now().Add(5 * time.Second)
	for {
		s = c.Snapshot()
		if s.Protocols["UDP"] >= liveUDPs+4 && s.Protocols["TCP"] >= 2*liveSYNs || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // anything late would show now
	s = c.Snapshot()

	udpFrame := int64(14 + 20 + 8 + liveUDPLen)
	respFrame := int64(14 + 20 + 8 + len(liveDNSResponse(t, 0)))
	queryFrame := int64(14 + 20 + 8 + len(liveDNSQuery(t)))
	const synFrame, rstFrame = 14 + 20 + 40, 14 + 20 + 20 // SYN with MSS, SACK, timestamps, window scale
	if got := s.Protocols["UDP"]; got != liveUDPs+4 {
		t.Errorf("UDP packets %d, want %d", got, liveUDPs+4)
	}
	if got := s.Protocols["TCP"]; got != 2*liveSYNs {
		t.Errorf("TCP packets %d, want %d", got, 2*liveSYNs)
	}
	ports := map[int]Port{}
	for _, p := range s.TopPorts {
		ports[p.Port] = p
	}
	for port, want := range map[int]Port{
		9999: {Port: 9999, Bytes: liveUDPs * udpFrame, Packets: liveUDPs},
		9998: {Port: 9998, Bytes: liveSYNs * (synFrame + rstFrame), Packets: 2 * liveSYNs},
		53:   {Port: 53, Name: "dns", Bytes: 3*respFrame + queryFrame, Packets: 4},
	} {
		got := ports[port]
		got.Name = want.Name // the service table's spelling is the engine's business
		if got != want {
			t.Errorf("port %d: %+v, want %+v", port, ports[port], want)
		}
	}
	var peer *Endpoint
	for i := range s.TopEndpoints {
		if s.TopEndpoints[i].IP == livePeerIP {
			peer = &s.TopEndpoints[i]
		}
	}
	if peer == nil {
		t.Fatalf("peer not among endpoints %+v", s.TopEndpoints)
	}
	wantIn := liveUDPs*udpFrame + liveSYNs*synFrame + 3*respFrame + queryFrame
	wantOut := int64(liveSYNs * rstFrame)
	if peer.In != wantIn || peer.Out != wantOut || peer.Packets != liveUDPs+2*liveSYNs+4 || peer.Local {
		t.Errorf("peer endpoint %+v, want in %d out %d packets %d", *peer, wantIn, wantOut, liveUDPs+2*liveSYNs+4)
	}
	if peer.Hostname != "peer.example.test" {
		t.Errorf("peer hostname %q, want peer.example.test (from the DNS answers)", peer.Hostname)
	}
	domains := map[string]Domain{}
	for _, d := range s.TopDomains {
		domains[d.Domain] = d
	}
	if d := domains["peer.example.test"]; d.Responses != 3 || len(d.IPs) != 1 || d.IPs[0] != livePeerIP {
		t.Errorf("peer.example.test: %+v", d)
	}
	if d := domains["www.example.test"]; d.Queries != 1 || d.Responses != 0 {
		t.Errorf("www.example.test: %+v", d)
	}
	var in, out int64
	for _, b := range s.History {
		in += b.In
		out += b.Out
	}
	if in != wantIn || out != wantOut {
		t.Errorf("history in %d out %d, want %d / %d", in, out, wantIn, wantOut)
	}
	if s.Dropped != 0 || !s.Running || s.Device != vh {
		t.Errorf("dropped %d running %v device %q", s.Dropped, s.Running, s.Device)
	}
}
