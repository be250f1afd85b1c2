package pcaprec

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	r := New(Config{Dir: dir})
	base := time.Unix(1_700_000_000, 0)
	write := func(name string, size int, age time.Duration) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o640); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, base.Add(-age), base.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	write("2023-11-14_22-13-20_eth0.pcap", 100, 0)
	write("old_eth0.pcap", 300, 2*time.Hour)
	write("mid_eth0.pcap", 200, time.Hour)
	write("tie_b.pcap", 1, time.Hour) // same mtime as mid: name decides, descending
	write("notes.txt", 5, 0)
	write("x.pcapng", 5, 0)
	if err := os.Mkdir(filepath.Join(dir, "d.pcap"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("mid_eth0.pcap", filepath.Join(dir, "link.pcap")); err != nil {
		t.Fatal(err)
	}
	got, err := r.Files()
	if err != nil {
		t.Fatal(err)
	}
	s := base.Unix()
	want := []FileEntry{
		{"2023-11-14_22-13-20_eth0.pcap", 100, s},
		{"tie_b.pcap", 1, s - 3600},
		{"mid_eth0.pcap", 200, s - 3600},
		{"old_eth0.pcap", 300, s - 7200},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Fatalf("Files (-got, +want):\n%s", diff)
	}

	missing := New(Config{Dir: filepath.Join(dir, "nope")})
	if got, err := missing.Files(); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Files of a missing dir = %#v, %v; want an empty list", got, err)
	}
}

// TestOpenPathSafety is RELIABILITY case 27: only plain .pcap names of
// regular files directly in Dir are served; traversal in any encoding,
// absolute paths, NUL, other extensions, directories and symlinks are
// refused with ErrBadName (400) or ErrNotFound (404).
func TestOpenPathSafety(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "captures")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	mustWrite := func(p, content string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	mustWrite(filepath.Join(dir, "good.pcap"), "good")
	mustWrite(filepath.Join(dir, "..pcap"), "dots") // a legal, if odd, name
	mustWrite(filepath.Join(parent, "x.pcap"), "outside")
	mustWrite(filepath.Join(parent, "secret.pcap"), "secret")
	if err := os.Symlink(filepath.Join(parent, "secret.pcap"), filepath.Join(dir, "evil.pcap")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret.pcap", filepath.Join(dir, "rel.pcap")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("good.pcap", filepath.Join(dir, "inside.pcap")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.pcap"), 0o750); err != nil {
		t.Fatal(err)
	}
	r := New(Config{Dir: dir})

	for _, tc := range []struct {
		desc, name string
		want       error  // nil: served
		content    string // when served
	}{
		{"plain file", "good.pcap", nil, "good"},
		{"dots before the extension", "..pcap", nil, "dots"},
		{"missing file", "missing.pcap", ErrNotFound, ""},
		{"parent traversal", "../x.pcap", ErrBadName, ""},
		{"encoded slash, literal", "..%2fx.pcap", ErrBadName, ""},
		{"encoded traversal, literal", "%2e%2e%2fx.pcap", ErrBadName, ""},
		{"double encoding", "%252e%252e%252fx.pcap", ErrBadName, ""},
		{"backslash traversal", `..\x.pcap`, ErrBadName, ""},
		{"absolute path", "/etc/passwd", ErrBadName, ""},
		{"absolute pcap path", filepath.Join(parent, "x.pcap"), ErrBadName, ""},
		{"other extension", "x.txt", ErrBadName, ""},
		{"pcapng", "good.pcapng", ErrBadName, ""},
		{"upper-case extension", "GOOD.PCAP", ErrBadName, ""},
		{"NUL then extension", "x.pcap\x00.txt", ErrBadName, ""},
		{"trailing NUL", "good.pcap\x00", ErrBadName, ""},
		{"subdirectory", "sub/x.pcap", ErrBadName, ""},
		{"empty", "", ErrBadName, ""},
		{"extension only", ".pcap", ErrBadName, ""},
		{"trailing space", "good.pcap ", ErrBadName, ""},
		{"symlink to a file outside", "evil.pcap", ErrNotFound, ""},
		{"relative symlink outside", "rel.pcap", ErrNotFound, ""},
		{"symlink to a file inside (refused by choice)", "inside.pcap", ErrNotFound, ""},
		{"directory named .pcap", "d.pcap", ErrNotFound, ""},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			f, info, err := r.Open(tc.name)
			if tc.want != nil {
				if f != nil {
					f.Close()
				}
				if !errors.Is(err, tc.want) {
					t.Fatalf("Open(%q) = %v, want %v", tc.name, err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tc.name, err)
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			if string(b) != tc.content || info.Size() != int64(len(tc.content)) || info.Name() != tc.name {
				t.Fatalf("served %q (info %v %d), want %q", b, info.Name(), info.Size(), tc.content)
			}
		})
	}

	// The backstop: even without the Lstat check, os.Root will not follow
	// the symlink out of Dir.
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, name := range []string{"evil.pcap", "rel.pcap", "../x.pcap"} {
		if f, err := root.Open(name); err == nil {
			f.Close()
			t.Errorf("os.Root opened %q outside its directory", name)
		}
	}

	gone := New(Config{Dir: filepath.Join(parent, "nope")})
	if _, _, err := gone.Open("good.pcap"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open in a missing dir = %v, want ErrNotFound", err)
	}
}

// TestJSONShapes pins the field names of spec 2.7.
func TestJSONShapes(t *testing.T) {
	for _, tc := range []struct {
		desc string
		v    any
		want string
	}{
		{"status", Status{Recording: true, File: "f.pcap", Packets: 2, Bytes: 3},
			`{"recording":true,"file":"f.pcap","packets":2,"bytes":3,"error":""}`},
		{"status with error", Status{File: "f.pcap", Error: "disk full"},
			`{"recording":false,"file":"f.pcap","packets":0,"bytes":0,"error":"disk full"}`},
		{"stop response", Status{File: "f.pcap", Packets: 2, Bytes: 3}.StopResponse(),
			`{"ok":true,"file":"f.pcap","packets":2,"bytes":3}`},
		{"file entry", FileEntry{Name: "f.pcap", Bytes: 3, ModTime: 1700000000},
			`{"name":"f.pcap","bytes":3,"mod_time":1700000000}`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.desc, b, err, tc.want)
		}
	}
}
