//go:build !unix

package geo

import "os"

// loadFile reads path into memory: without mmap the databases live in
// the heap (see mmap_unix.go for why Unix maps a private copy).
func loadFile(path string) (data []byte, unmap func() error, err error) {
	data, err = os.ReadFile(path)
	return data, func() error { return nil }, err
}

func release([]byte) {}
