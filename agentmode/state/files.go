package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Files names the client-certificate files kept beside a state file.
type Files struct {
	// Cert is the client certificate the hub signed (PEM).
	Cert string
	// Key is the agent's private key (PEM, mode 0600).
	Key string
	// CA is the hub CA that signed the client certificate (PEM).
	CA string
	// Queue is the offline queue (JSON lines).
	Queue string
}

// FilesFor returns the file names used beside the state file statePath:
// <state>.crt, <state>.key, <state>.ca and <state>.queue.jsonl (spec 1).
func FilesFor(statePath string) Files {
	return Files{
		Cert:  statePath + ".crt",
		Key:   statePath + ".key",
		CA:    statePath + ".ca",
		Queue: statePath + ".queue.jsonl",
	}
}

// ReadOptional returns the content of path, or nil when it does not exist.
func ReadOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

func splitPath(path string) (dir, base string) {
	return filepath.Dir(path), filepath.Base(path)
}
