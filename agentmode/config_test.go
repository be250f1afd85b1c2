package agentmode

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestDefaultStatePath: the state never defaults to the working directory
// (a quick start run from a source checkout once left its state and queue
// among the project's files and broke its own tests).
func TestDefaultStatePath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the table holds Linux's directories")
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	home := func(h string) func() (string, error) {
		return func() (string, error) {
			if h == "" {
				return "", errors.New("no home")
			}
			return h, nil
		}
	}
	for _, tc := range []struct {
		desc string
		euid int
		env  map[string]string
		home string
		want string
	}{
		{"root: the system state directory, whatever XDG says", 0, map[string]string{"XDG_STATE_HOME": "/x"}, "/root", "/var/lib/netmon/netmon-agent.state.json"},
		{"user with XDG_STATE_HOME", 1000, map[string]string{"XDG_STATE_HOME": "/home/u/.st"}, "/home/u", "/home/u/.st/netmon/netmon-agent.state.json"},
		{"user without it: ~/.local/state", 1000, nil, "/home/u", "/home/u/.local/state/netmon/netmon-agent.state.json"},
		{"a relative XDG_STATE_HOME is ignored (the spec says so)", 1000, map[string]string{"XDG_STATE_HOME": "rel"}, "/home/u", "/home/u/.local/state/netmon/netmon-agent.state.json"},
		{"no home at all: the working directory is all that is left", 1000, nil, "", "netmon-agent.state.json"},
	} {
		if got := statePathFor(tc.euid, env(tc.env), home(tc.home)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.desc, got, tc.want)
		}
	}
	if p := DefaultConfig().StatePath; !filepath.IsAbs(p) {
		t.Errorf("default state path %q is relative to the working directory", p)
	}
}

// TestStartCreatesStateDirectory: a first run creates the (default) state
// directory, owner-only, and keeps state and queue there.
func TestStartCreatesStateDirectory(t *testing.T) {
	hub := newFakeHub(t, nil)
	dir := filepath.Join(t.TempDir(), "state", "netmon")
	ta := startAgent(t, hub, dir, nil, nil)
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	_ = ta
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state directory: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, DefaultStateFile)); err != nil {
		t.Errorf("state file: %v", err)
	}
}
