package siem

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/app/netguard"
)

// peer finds a peer binary, or skips (fails under CI=true).
func peer(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		for _, d := range []string{"/usr/sbin", "/sbin"} {
			if _, e := os.Stat(filepath.Join(d, name)); e == nil {
				return filepath.Join(d, name)
			}
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI (make deps)", name)
		}
		t.Skipf("%s not installed (make deps)", name)
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// rsyslog runs a real rsyslogd on 127.0.0.1:port (UDP and TCP) writing
// the raw bytes received (%rawmsg%, PRI included, an octet count
// stripped; control characters such as LEEF's tabs kept as received)
// one per line to the file it returns (PEERS-2.md recipe 3).
func rsyslog(t *testing.T, port int) (out string, stop func()) {
	t.Helper()
	bin := peer(t, "rsyslogd")
	dir := t.TempDir()
	out = filepath.Join(dir, "messages.raw")
	conf := fmt.Sprintf(`global(workDirectory=%q maxMessageSize="64k" parser.escapeControlCharactersOnReceive="off")
module(load="imudp")
module(load="imtcp")
template(name="RawFmt" type="string" string="%%rawmsg%%\n")
ruleset(name="remote") {
  action(type="omfile" file=%q template="RawFmt")
}
input(type="imudp" address="127.0.0.1" port="%d" ruleset="remote")
input(type="imtcp" address="127.0.0.1" port="%d" ruleset="remote")
`, dir, out, port, port)
	cf := filepath.Join(dir, "rsyslog.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-n", "-f", cf, "-i", filepath.Join(dir, "rsyslogd.pid"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rsyslogd did not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return out, stop
}

func waitLines(t *testing.T, file string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(b) > 0 && len(lines) >= n {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("rsyslog wrote %q, want %d lines", b, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var loopback = netguard.New(netguard.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})

// TestRsyslog sends CEF over UDP, LEEF over TCP with octet counting and
// JSON over TCP with newline framing to a real rsyslogd, and checks the
// exact bytes it received, PRI included; then rsyslogd restarts and the
// TCP forwarder reconnects by itself.
func TestRsyslog(t *testing.T) {
	port := freePort(t)
	out, stop := rsyslog(t, port)
	target := fmt.Sprintf("127.0.0.1:%d", port)
	at := time.Date(2026, 11, 25, 8, 7, 6, 0, time.UTC)
	ctx := context.Background()

	send := func(f *Forwarder) {
		t.Helper()
		f.now = func() time.Time { return at }
		if err := f.Send(ctx, portEvent); err != nil {
			t.Fatalf("Send %+v: %v", f.cfg, err)
		}
	}
	udp := New(Config{Target: target, Hostname: "hub1"}, loopback)
	send(udp)
	waitLines(t, out, 1)
	tcp := New(Config{Format: FormatLEEF, Transport: TransportTCP, Target: target, Hostname: "hub1"}, loopback)
	defer tcp.Close()
	send(tcp)
	waitLines(t, out, 2)
	nl := New(Config{Format: FormatJSON, Transport: TransportTCP, Framing: "newline", Target: target, Hostname: "hub1"}, loopback)
	defer nl.Close()
	send(nl)

	cef, _ := Format(FormatCEF, portEvent)
	leef, _ := Format(FormatLEEF, portEvent)
	js, _ := Format(FormatJSON, portEvent)
	want := []string{
		"<130>Nov 25 08:07:06 hub1 netmon: " + cef, // local0 (16*8) + critical (2) for severity 9
		"<130>Nov 25 08:07:06 hub1 netmon: " + leef,
		"<130>Nov 25 08:07:06 hub1 netmon: " + js,
	}
	got := waitLines(t, out, 3)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}

	// The SIEM restarts: the kept TCP connection is dead, the next send
	// dials again.
	stop()
	out2, _ := rsyslog(t, port)
	send(tcp)
	if got := waitLines(t, out2, 1); got[0] != want[1] {
		t.Errorf("after reconnect got %q, want %q", got[0], want[1])
	}
}

// TestGuardRefusesSIEM: a SIEM target on loopback without an allow-list
// is refused before any packet is sent.
func TestGuardRefusesSIEM(t *testing.T) {
	for _, tr := range []string{TransportUDP, TransportTCP} {
		f := New(Config{Transport: tr, Target: "127.0.0.1:514"}, netguard.New(netguard.DefaultConfig()))
		if err := f.Send(context.Background(), portEvent); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s to loopback: %v, want refused", tr, err)
		}
	}
}
