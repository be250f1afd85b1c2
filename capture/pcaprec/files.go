package pcaprec

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
)

var (
	// ErrBadName is returned by Open for a name that is not a plain
	// <name>.pcap file name: the API answers 400.
	ErrBadName = errors.New("invalid pcap file name")
	// ErrNotFound is returned by Open when no such recording exists in Dir
	// (or the name is a directory, a symlink or another non-regular file):
	// the API answers 404.
	ErrNotFound = errors.New("pcap file not found")
)

// validName is the only shape of name Open accepts: one path element of
// safe characters ending in .pcap. It rules out separators, "..", absolute
// paths, NUL, percent signs (so a still-encoded "%2e%2e%2f" or a double
// encoding "%252e" is refused, not decoded again) and other extensions.
var validName = regexp.MustCompile(`^[A-Za-z0-9._-]+\.pcap$`)

// FileEntry is one recording file of GET /api/record/files (spec 2.7).
type FileEntry struct {
	Name    string `json:"name"`
	Bytes   int64  `json:"bytes"`
	ModTime int64  `json:"mod_time"` // Unix seconds
}

// Files lists the .pcap files directly in Dir, newest first (by
// modification time, then by name). Only regular files with a valid name
// are listed, the same set Open serves. A missing Dir gives an empty list.
func (r *Recorder) Files() ([]FileEntry, error) {
	root, err := os.OpenRoot(r.cfg.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []FileEntry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open record dir: %w", err)
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("list record dir: %w", err)
	}
	type file struct {
		FileEntry
		nanos int64
	}
	var files []file
	for _, e := range entries {
		if !e.Type().IsRegular() || !validName.MatchString(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed since ReadDir
		}
		mt := info.ModTime()
		files = append(files, file{FileEntry{e.Name(), info.Size(), mt.Unix()}, mt.UnixNano()})
	}
	slices.SortFunc(files, func(a, b file) int {
		if a.nanos != b.nanos {
			return cmp.Compare(b.nanos, a.nanos)
		}
		return strings.Compare(b.Name, a.Name)
	})
	out := make([]FileEntry, len(files))
	for i, f := range files {
		out[i] = f.FileEntry
	}
	return out, nil
}

// Open opens a recording for download. name is the already URL-decoded
// query value; it must be a plain file name matching ^[A-Za-z0-9._-]+\.pcap$
// (else ErrBadName) of a regular file directly in Dir (else ErrNotFound).
// The caller closes the file.
//
// Symlinks are refused even when they point inside Dir: the Recorder never
// makes them and Files does not list them, so a symlink is something placed
// by someone else. The check is an Lstat through an os.Root of Dir, then an
// open through the same os.Root, which cannot leave Dir whatever the name
// or a concurrent swap of the file for a symlink does; the opened file must
// be the one that was checked (os.SameFile).
func (r *Recorder) Open(name string) (*os.File, fs.FileInfo, error) {
	if !validName.MatchString(name) {
		return nil, nil, ErrBadName
	}
	root, err := os.OpenRoot(r.cfg.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open record dir: %w", err)
	}
	defer root.Close() // the opened file outlives its root
	checked, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, fmt.Errorf("stat %s: %w", name, err)
	}
	if !checked.Mode().IsRegular() {
		return nil, nil, ErrNotFound
	}
	f, err := root.Open(name)
	if err != nil {
		// Gone since the Lstat, or swapped for a symlink that os.Root
		// refused to follow out of Dir.
		return nil, nil, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	info, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("stat %s: %w", name, err)
	}
	if !info.Mode().IsRegular() || !os.SameFile(checked, info) {
		_ = f.Close()
		return nil, nil, ErrNotFound
	}
	return f, info, nil
}
