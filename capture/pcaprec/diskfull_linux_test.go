package pcaprec

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// TestDiskFull records onto a 256 KiB tmpfs until it is full: the write
// error ends the recording, is returned once and kept in Status.Error, later
// Writes are harmless no-ops, and the next Start (after space was freed)
// clears the error.
func TestDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the disk-full test needs root (tmpfs mount); CI runs as root")
		}
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })

	r := New(Config{Dir: dir})
	if _, err := r.Start("eth0", layers.LinkTypeEthernet, 0); err != nil {
		t.Fatal(err)
	}
	frames := makeFrames(t, 100)
	var werr error
	writes := 0
	for i := 0; i < 100_000 && werr == nil; i++ {
		f := frames[i%len(frames)]
		werr = r.Write(f.Data, f.CI)
		writes++
	}
	if !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("after %d writes: %v, want ENOSPC", writes, werr)
	}
	st := r.Status()
	if st.Recording || !strings.Contains(st.Error, "no space left") || st.Packets == 0 {
		t.Fatalf("Status after disk full = %+v", st)
	}
	f := frames[0]
	if err := r.Write(f.Data, f.CI); err != nil {
		t.Fatalf("Write after the failure = %v, want a no-op", err)
	}
	if _, err := r.Stop(); !errors.Is(err, ErrNotRecording) {
		t.Fatalf("Stop after the failure = %v, want ErrNotRecording", err)
	}

	if err := os.Remove(filepath.Join(dir, st.File)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Start("eth0", layers.LinkTypeEthernet, 0); err != nil {
		t.Fatal(err)
	}
	if st := r.Status(); !st.Recording || st.Error != "" {
		t.Fatalf("Status after a new Start = %+v, want recording and no error", st)
	}
	if _, err := r.Stop(); err != nil {
		t.Fatal(err)
	}
}
