package snmptest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// LLDPLink is a real LLDP link (PEERS-2.md recipe): two network
// namespaces joined by a veth pair, an lldpd on each end sending every
// 2 s, and the A end's lldpd an AgentX subagent of an snmpd in the test's
// own namespace (AgentX over a Unix socket crosses namespaces), so that
// snmpd's LLDP-MIB holds the neighbour B as lldpd heard it in real LLDP
// frames. Everything is removed at the test's end.
type LLDPLink struct {
	Agent        *Agent // snmpd on loopback, LLDP-MIB through AgentX
	HostA, HostB string // the lldpd system names of the two ends
	PortA, PortB string // the veth interface names
}

// NeedRoot skips without root (fails under CI=true): namespaces and veth
// pairs need CAP_NET_ADMIN.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("network namespaces need root; CI must run this test as root")
		}
		t.Skip("network namespaces need root")
	}
}

// StartLLDP builds the link and waits until snmpd's lldpRemTable has the
// B end (at most 20 s).
func StartLLDP(t testing.TB) *LLDPLink {
	t.Helper()
	NeedRoot(t)
	Need(t, "lldpd")
	Need(t, "ip")
	Need(t, "snmpwalk")
	tag := fmt.Sprintf("%05d", rand.IntN(100000))
	nsA, nsB := "nmlA"+tag, "nmlB"+tag
	l := &LLDPLink{HostA: "lldp-a-" + tag + ".example.test", HostB: "lldp-b-" + tag + ".example.test", PortA: "nmva" + tag, PortB: "nmvb" + tag}
	_, runErr := os.Stat("/run/lldpd")
	hadRun := runErr == nil
	// lldpd (as _lldpd) must reach the AgentX socket: a 0755 directory
	// of its own, outside the test's 0700 temporary tree.
	dir, err := os.MkdirTemp("", "netmon-lldp-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var procs []*exec.Cmd
	t.Cleanup(func() {
		for _, c := range procs {
			_ = c.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = c.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				_ = c.Process.Kill()
				<-done
			}
		}
		_ = exec.Command("ip", "netns", "del", nsA).Run()
		_ = exec.Command("ip", "netns", "del", nsB).Run()
		_ = os.RemoveAll(dir)
		if !hadRun {
			_ = os.RemoveAll("/run/lldpd") // lldpd's privsep chroot, made by the first lldpd
		}
	})
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
	run("ip", "netns", "add", nsA)
	run("ip", "netns", "add", nsB)
	run("ip", "link", "add", l.PortA, "type", "veth", "peer", "name", l.PortB)
	run("ip", "link", "set", l.PortA, "netns", nsA)
	run("ip", "link", "set", l.PortB, "netns", nsB)
	run("ip", "-n", nsA, "addr", "add", "192.0.2.1/24", "dev", l.PortA)
	run("ip", "-n", nsB, "addr", "add", "192.0.2.2/24", "dev", l.PortB)
	for _, x := range [][2]string{{nsA, l.PortA}, {nsB, l.PortB}} {
		run("ip", "-n", x[0], "link", "set", "lo", "up")
		run("ip", "-n", x[0], "link", "set", x[1], "up")
	}

	sock := filepath.Join(dir, "agentx.sock")
	l.Agent = Start(t, "master agentx", "agentXSocket "+sock, "agentXPerms 0660 0755 _lldpd _lldpd")

	start := func(ns, host, port string, extra ...string) {
		t.Helper()
		conf := filepath.Join(dir, ns+".conf")
		if err := os.WriteFile(conf, []byte("configure system hostname "+host+"\nconfigure lldp tx-interval 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"netns", "exec", ns, "lldpd", "-d"}, extra...)
		args = append(args, "-u", filepath.Join(dir, ns+".sock"), "-O", conf, "-I", port)
		c := exec.Command("ip", args...)
		log, err := os.Create(filepath.Join(dir, ns+".log"))
		if err != nil {
			t.Fatal(err)
		}
		c.Stdout, c.Stderr = log, log
		c.SysProcAttr = ownGroup()
		if err := c.Start(); err != nil {
			t.Fatalf("start lldpd in %s: %v", ns, err)
		}
		procs = append(procs, c)
	}
	start(nsA, l.HostA, l.PortA, "-x", "-X", sock)
	start(nsB, l.HostB, l.PortB)

	// lldpRemSysName of the B end, through snmpd and AgentX.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := exec.Command("snmpwalk", "-v2c", "-c", Community, "-On", "-Oqv", l.Agent.Addr, "1.0.8802.1.1.2.1.4.1.1.9").CombinedOutput()
		if strings.Contains(string(out), l.HostB) {
			return l
		}
		time.Sleep(250 * time.Millisecond)
	}
	logA, _ := os.ReadFile(filepath.Join(dir, nsA+".log"))
	t.Fatalf("snmpd's LLDP-MIB did not show %s within 20 s; lldpd A log:\n%s", l.HostB, logA)
	return nil
}
