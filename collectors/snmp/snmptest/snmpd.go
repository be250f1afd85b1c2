// Package snmptest starts a real net-snmp snmpd on a loopback port for
// the tests of the poller and of the hub's device routes. Without snmpd
// a test skips, except under CI=true where it fails: CI must run it.
package snmptest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Users are the SNMPv3 users every agent has (PEERS.md recipe): u1
// SHA/AES, u2 SHA-256/AES-256, both authPriv.
const (
	Community = "public"
	AuthPass  = "authpass1"
	PrivPass  = "privpass1"
)

// Agent is a running snmpd.
type Agent struct {
	Addr string // 127.0.0.1:port
	Dir  string
	bin  string
	cmd  *exec.Cmd
}

// Need returns the path of a program or skips (fails under CI=true).
func Need(t testing.TB, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not installed (apt-get install snmpd snmp snmpsim; CI must run this test)", prog)
		}
		t.Skipf("%s not installed", prog)
	}
	return p
}

// FreeUDPPort returns a loopback UDP port free a moment ago.
func FreeUDPPort(t testing.TB) int {
	t.Helper()
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// Start runs snmpd with extra configuration lines (sysName, sysDescr...)
// and waits until it answers; it is stopped at the test's end.
func Start(t testing.TB, extra ...string) *Agent {
	t.Helper()
	bin := Need(t, "snmpd")
	dir := t.TempDir()
	port := FreeUDPPort(t)
	conf := fmt.Sprintf("agentAddress udp:127.0.0.1:%d\nrocommunity %s 127.0.0.1\n"+
		"createUser u1 SHA \"%s\" AES \"%s\"\ncreateUser u2 SHA-256 \"%s\" AES-256 \"%s\"\nrouser u1 priv\nrouser u2 priv\n",
		port, Community, AuthPass, PrivPass, AuthPass, PrivPass)
	for _, l := range extra {
		conf += l + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, "snmpd.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "persist"), 0o700); err != nil {
		t.Fatal(err)
	}
	a := &Agent{Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, bin: bin}
	t.Cleanup(a.Stop)
	a.launch(t)
	return a
}

// launch starts snmpd on a's address and directory and waits until it
// answers.
func (a *Agent) launch(t testing.TB) {
	t.Helper()
	dir := a.Dir
	cmd := exec.Command(a.bin, "-f", "-LS0-4d", "-C", "-c", filepath.Join(dir, "snmpd.conf"), "-M", "/dev/null", "-p", filepath.Join(dir, "snmpd.pid"))
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+filepath.Join(dir, "persist"), "MIBS=", "MIBDIRS=/dev/null")
	cmd.SysProcAttr = ownGroup()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start snmpd: %v", err)
	}
	a.cmd = cmd
	if !Answers(a.Addr, 5*time.Second) {
		t.Fatalf("snmpd on %s did not answer within 5 s", a.Addr)
	}
}

// Restart stops snmpd and starts it again on the same port and state
// directory: same engine ID, engine boots one more (what a rebooted
// device looks like to a v3 manager).
func (a *Agent) Restart(t testing.TB) {
	t.Helper()
	a.Stop()
	a.launch(t)
}

// Pid is snmpd's process id (0 once stopped).
func (a *Agent) Pid() int {
	if a.cmd == nil || a.cmd.Process == nil {
		return 0
	}
	return a.cmd.Process.Pid
}

// Stop stops the agent (idempotent).
func (a *Agent) Stop() {
	if a.cmd == nil || a.cmd.Process == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
	}
	a.cmd = nil
}

// Answers reports whether a v2c GET of sysName to addr (community
// public) is answered within d.
func Answers(addr string, d time.Duration) bool { return answers(addr, Community, d) }

func answers(addr, community string, d time.Duration) bool {
	host, ps, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(ps)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		g := &gosnmp.GoSNMP{Target: host, Port: uint16(port), Community: community, Version: gosnmp.Version2c,
			Timeout: 200 * time.Millisecond, Retries: 0}
		if g.Connect() == nil {
			_, err := g.Get([]string{".1.3.6.1.2.1.1.5.0"})
			g.Conn.Close()
			if err == nil {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}
