package snmptest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Sim is a running snmpsimd (Debian's snmpsim 0.4.5) serving the
// .snmprec files of a data directory; each file's name is a community.
type Sim struct {
	Addr string
	Pid  int
	cmd  *exec.Cmd
}

// StartSim serves the data directory dir on a free loopback port. The
// recipe and its pitfalls are in PEERS-2.md: as root it must drop to
// nobody, which must read dir and write the cache.
func StartSim(t testing.TB, dir string) *Sim {
	t.Helper()
	bin := Need(t, "snmpsimd")
	work := t.TempDir()
	cache := filepath.Join(work, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"--data-dir=" + dir, "--cache-dir=" + cache, "--logging-method=null"}
	if os.Geteuid() == 0 {
		nobody, err := user.Lookup("nobody")
		if err != nil {
			t.Fatalf("snmpsimd as root needs the user nobody: %v", err)
		}
		uid, _ := strconv.Atoi(nobody.Uid)
		gid, _ := strconv.Atoi(nobody.Gid)
		if err := os.Chown(cache, uid, gid); err != nil {
			t.Fatal(err)
		}
		// nobody must reach the data and the cache through every parent.
		for _, p := range []string{dir, work} {
			for d := p; d != "/" && d != "."; d = filepath.Dir(d) {
				if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o005 != 0o005 {
					_ = os.Chmod(d, fi.Mode().Perm()|0o055)
				}
			}
		}
		group := "nogroup"
		if _, err := user.LookupGroup(group); err != nil {
			group = "nobody"
		}
		args = append(args, "--process-user=nobody", "--process-group="+group)
	}
	port := FreeUDPPort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, append(args, "--agent-udpv4-endpoint="+addr)...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = ownGroup()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start snmpsimd: %v", err)
	}
	s := &Sim{Addr: addr, Pid: cmd.Process.Pid, cmd: cmd}
	t.Cleanup(s.Stop)
	community := ""
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".snmprec") {
				community = strings.TrimSuffix(e.Name(), ".snmprec")
				break
			}
		}
	}
	if !answers(addr, community, 60*time.Second) {
		t.Fatalf("snmpsimd on %s did not answer within 60 s: %s", addr, out.String())
	}
	return s
}

// Stop stops snmpsimd (SIGTERM; it takes about a second).
func (s *Sim) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// WriteSwitch writes a synthetic switch: the system group, nIfs
// gigabit ethernet ports in ifTable and ifXTable with 64-bit counters,
// sorted as snmpsim needs. Counters are static: a scale run measures
// the requests, not the traffic.
func WriteSwitch(path, sysName string, nIfs int) error {
	type row struct {
		oid []int
		typ string
		val string
	}
	parse := func(s string) []int {
		var o []int
		for _, p := range strings.Split(s, ".") {
			n, _ := strconv.Atoi(p)
			o = append(o, n)
		}
		return o
	}
	rows := []row{
		{parse("1.3.6.1.2.1.1.1.0"), "4", "Synthetic switch " + sysName},
		{parse("1.3.6.1.2.1.1.2.0"), "6", "1.3.6.1.4.1.9.1.1208"},
		{parse("1.3.6.1.2.1.1.3.0"), "67", "123456"},
		{parse("1.3.6.1.2.1.1.5.0"), "4", sysName},
	}
	for i := 1; i <= nIfs; i++ {
		add := func(prefix string, col int, typ, val string) {
			rows = append(rows, row{parse(fmt.Sprintf("%s.%d.%d", prefix, col, i)), typ, val})
		}
		const ift, ifx = "1.3.6.1.2.1.2.2.1", "1.3.6.1.2.1.31.1.1.1"
		add(ift, 1, "2", strconv.Itoa(i))
		add(ift, 2, "4", fmt.Sprintf("Gi1/0/%d", i))
		add(ift, 3, "2", "6")
		add(ift, 5, "66", "1000000000")
		add(ift, 7, "2", "1")
		add(ift, 8, "2", "1")
		add(ift, 10, "65", strconv.Itoa(i*1000))
		add(ift, 13, "65", "0")
		add(ift, 14, "65", "0")
		add(ift, 16, "65", strconv.Itoa(i*2000))
		add(ift, 19, "65", "0")
		add(ift, 20, "65", "0")
		add(ifx, 1, "4", fmt.Sprintf("Gi1/0/%d", i))
		add(ifx, 6, "70", strconv.Itoa(i*1_000_000_000))
		add(ifx, 10, "70", strconv.Itoa(i*2_000_000_000))
		add(ifx, 15, "66", "1000")
		add(ifx, 18, "4", fmt.Sprintf("port %d", i))
	}
	less := func(a, b []int) bool {
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return len(a) < len(b)
	}
	sort.Slice(rows, func(i, j int) bool { return less(rows[i].oid, rows[j].oid) })
	var b strings.Builder
	for _, r := range rows {
		parts := make([]string, len(r.oid))
		for k, n := range r.oid {
			parts[k] = strconv.Itoa(n)
		}
		fmt.Fprintf(&b, "%s|%s|%s\n", strings.Join(parts, "."), r.typ, r.val)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
