//go:build unix

package geo

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// loadFile maps a private copy of path read-only and returns its bytes
// and the function that unmaps them.
//
// Why a copy: mapping the operator's file itself would be cheapest, but
// `cp new.mmdb country.mmdb` truncates it in place and a lookup running
// on the truncated mapping dies with SIGBUS. The copy is made beside the
// file (else in the temporary directory) and unlinked at once, so no one
// can truncate it and nothing is left behind by a crash.
//
// Why a mapping rather than a read into the heap: the pages belong to
// the page cache, so after the load's survey they are dropped from the
// process (release) and come back only for the parts lookups touch.
// That keeps some 16 MB of databases out of the hub's idle RSS.
func loadFile(path string) (data []byte, unmap func() error, err error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".netmon-geoip-*")
	if err != nil {
		tmp, err = os.CreateTemp("", "netmon-geoip-*")
		if err != nil {
			return nil, nil, fmt.Errorf("private copy: %w", err)
		}
	}
	_ = os.Remove(tmp.Name()) // the open descriptor and the mapping keep it
	defer tmp.Close()
	n, err := io.Copy(tmp, src)
	if err != nil {
		return nil, nil, fmt.Errorf("private copy: %w", err)
	}
	if n == 0 {
		return nil, nil, fmt.Errorf("empty file")
	}
	if int64(int(n)) != n {
		return nil, nil, fmt.Errorf("file of %d bytes too large to map", n)
	}
	data, err = unix.Mmap(int(tmp.Fd()), 0, int(n), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map private copy: %w", err)
	}
	return data, func() error { return unix.Munmap(data) }, nil
}

// release drops data's pages from the process; the next access reads
// them back from the page cache (or the copy on disk).
func release(data []byte) {
	_ = unix.Madvise(data, unix.MADV_DONTNEED)
}
