package collect

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestLinkSpeed: the speed file's value in Mbit/s; -1, junk, zero, a
// missing file and names that would leave the tree all give 0 (unknown).
func TestLinkSpeed(t *testing.T) {
	dir := t.TempDir()
	old := sysClassNet
	sysClassNet = dir
	t.Cleanup(func() { sysClassNet = old })
	for name, body := range map[string]string{"eth0": "1000\n", "veth1": "10000\n", "wl0": "-1\n", "odd": "fast\n", "zero": "0\n"} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "speed"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "speed"), []byte("1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"eth0": 1000, "veth1": 10000, "wl0": 0, "odd": 0, "zero": 0, "missing": 0, "": 0, ".": 0, "..": 0, "../x": 0} {
		if got := linkSpeed(name); got != want {
			t.Errorf("linkSpeed(%q) = %d, want %d", name, got, want)
		}
	}
}

// TestLinkSpeedRealVeth: a veth pair reports 10000 Mbit/s and loopback
// has no speed (root: creates the pair).
func TestLinkSpeedRealVeth(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root under CI")
		}
		t.Skip("needs root")
	}
	a, b := "lsA"+strconv.Itoa(os.Getpid()%100000), "lsB"+strconv.Itoa(os.Getpid()%100000)
	run(t, "ip", "link", "add", a, "type", "veth", "peer", "name", b)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", a).Run() })
	run(t, "ip", "link", "set", a, "up")
	run(t, "ip", "link", "set", b, "up")
	if got := linkSpeed(a); got != 10000 {
		t.Errorf("veth speed %d, want 10000", got)
	}
	if got := linkSpeed("lo"); got != 0 {
		t.Errorf("lo speed %d, want 0", got)
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
