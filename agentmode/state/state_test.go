package state

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOpenCreatesAndRoundTrips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netmon-agent.state.json")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	first := st.Get()
	if len(first.MachineID) != 32 || first.NextSeq != 1 || first.Enrolled() {
		t.Fatalf("fresh state %+v", first)
	}
	want := State{
		HubURL: "https://hub:8080", AgentID: 7, AgentToken: "agt_x", MachineID: first.MachineID,
		CAPEM: "-----BEGIN CERTIFICATE-----\n", Unauthorized: 2, NextSeq: 42, Dropped: 3,
		IntervalSeconds: 15, ProtocolVersion: 1,
	}
	if err := st.Update(func(s *State) { *s = want }); err != nil {
		t.Fatal(err)
	}
	st2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st2.Get(), want); diff != "" {
		t.Errorf("round trip (-got, +want):\n%s", diff)
	}
	// The machine id is created once: a second Open keeps it.
	if st2.Get().MachineID != first.MachineID {
		t.Error("machine id changed")
	}
}

func TestFileModeAndAtomicRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A reader holding the old file keeps seeing the old content: the
	// file is replaced by a rename, never rewritten in place (where a
	// crash could leave half of it).
	// (Windows cannot rename over an open file: not checked there.)
	var old *os.File
	if runtime.GOOS != "windows" {
		if old, err = os.Open(path); err != nil {
			t.Fatal(err)
		}
		defer old.Close()
	}
	for i := 0; i < 5; i++ {
		if err := st.Update(func(s *State) { s.NextSeq++ }); err != nil {
			t.Fatal(err)
		}
	}
	if runtime.GOOS != "windows" {
		held, err := io.ReadAll(old)
		if err != nil {
			t.Fatal(err)
		}
		if string(held) != string(before) {
			t.Error("state file rewritten in place, want temp file + rename")
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
	}
	if got, _ := Read(path); got.NextSeq != 6 {
		t.Errorf("next seq %d, want 6", got.NextSeq)
	}
	// No temporary file is left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only s.json", names)
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		desc    string
		content *string
		wantIs  error
		wantMsg string
	}{
		{"missing", nil, fs.ErrNotExist, "read state file"},
		{"not JSON", ptr("{\"agent_id\": 3,"), ErrCorrupt, "delete it to enroll"},
		{"wrong type", ptr(`{"agent_id": "x", "machine_id": "m"}`), ErrCorrupt, "s.json"},
		{"no machine id", ptr(`{"agent_id": 3}`), ErrCorrupt, "no machine_id"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.json")
			if tt.content != nil {
				if err := os.WriteFile(path, []byte(*tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Read(path)
			if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %v, want %v containing %q", err, tt.wantIs, tt.wantMsg)
			}
			if tt.content != nil {
				// Open refuses too, and leaves the file as it was for
				// the operator to look at.
				if _, err := Open(path); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Open: %v", err)
				}
				got, _ := os.ReadFile(path)
				if string(got) != *tt.content {
					t.Error("corrupt file was modified")
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestFilesFor(t *testing.T) {
	got := FilesFor("/var/lib/netmon/netmon-agent.state.json")
	want := Files{
		Cert:  "/var/lib/netmon/netmon-agent.state.json.crt",
		Key:   "/var/lib/netmon/netmon-agent.state.json.key",
		CA:    "/var/lib/netmon/netmon-agent.state.json.ca",
		Queue: "/var/lib/netmon/netmon-agent.state.json.queue.jsonl",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
}
