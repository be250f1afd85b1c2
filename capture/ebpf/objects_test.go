package ebpf

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

// The committed objects are current: `make bpf` records the hashes of
// attr.bpf.c and of the objects it generated in attr.sha256, so a CI
// without clang can tell a source edited without regenerating (or
// objects replaced by hand).
func TestObjectsCurrent(t *testing.T) {
	raw, err := os.ReadFile("attr.sha256")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 3 {
		t.Fatalf("attr.sha256 has %d lines, want 3", len(lines))
	}
	for _, l := range lines {
		want, name, ok := strings.Cut(l, "  ")
		if !ok {
			t.Fatalf("bad line %q", l)
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s changed since `make bpf` (sha256 %s, recorded %s): run `make bpf` and commit", name, got, want)
		}
	}
}
