package vault

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxKeyFile bounds what is read from a key file: a key is 64 characters,
// and a path pointing at a device or a huge file must not hang the start.
const maxKeyFile = 4096

// LoadKey returns the master key cfg points at. With Source "file" it
// reads File, or, when File does not exist, generates a random key, writes
// it there (mode 0600, never replacing a file another process created in
// the meantime) and reports generated=true; the caller should then tell
// the operator to back the file up. With Source "env" it reads the
// variable EnvKey through getenv (os.Getenv in production). Error
// messages name the file or variable but never contain key material.
//
// A key file readable by group or others is still loaded: the caller
// warns about it with FileModeTooOpen.
func LoadKey(cfg Config, getenv func(string) string) (key Key, generated bool, err error) {
	switch cfg.Source {
	case "", SourceFile:
		path := cfg.File
		if path == "" {
			path = defaultFile
		}
		return loadFile(path)
	case SourceEnv:
		if getenv == nil {
			getenv = os.Getenv
		}
		key, err := parseEnv(getenv(EnvKey))
		return key, false, err
	default:
		return Key{}, false, fmt.Errorf("vault key source %q: want %q or %q", cfg.Source, SourceFile, SourceEnv)
	}
}

// FileModeTooOpen reports whether the file at path can be read or written
// by its group or by others. It is always false where permissions are not
// Unix modes (Windows).
func FileModeTooOpen(path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, fmt.Errorf("stat vault key file %q: %w", path, err)
	}
	return modeTooOpen(st.Mode()), nil
}

// loadFile reads the key file, generating it when absent.
func loadFile(path string) (Key, bool, error) {
	key, err := readFile(path)
	if err == nil {
		return key, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return Key{}, false, err
	}
	created, err := generateFile(path)
	if err != nil {
		return Key{}, false, err
	}
	if !created {
		// Another process created the file between our read and our
		// write: use its key, never overwrite it.
		key, err := readFile(path)
		return key, false, err
	}
	key, err = readFile(path)
	return key, true, err
}

// readFile reads and parses a key file. A missing file is returned as an
// error wrapping fs.ErrNotExist.
func readFile(path string) (Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return Key{}, fmt.Errorf("open vault key file %q: %w", path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return Key{}, fmt.Errorf("read vault key file %q: %w", path, err)
	}
	if len(data) > maxKeyFile {
		return Key{}, fmt.Errorf("vault key file %q: larger than %d bytes, want 64 hex characters", path, maxKeyFile)
	}
	key, err := parseHex(strings.TrimSpace(string(data)))
	if err != nil {
		return Key{}, fmt.Errorf("vault key file %q: %w", path, err)
	}
	return key, nil
}

// generateFile writes a new random key to path unless path exists, and
// reports whether it did. The key is written to a temporary file in the
// same directory, synced, then hard-linked to path: link fails if path
// exists (like O_EXCL, so two processes never overwrite each other's
// key), and path never holds a partial key, not even after a crash. On a
// file system without hard links it falls back to creating path with
// O_EXCL directly.
func generateFile(path string) (created bool, err error) {
	var key Key
	_, _ = rand.Read(key[:]) // crypto/rand.Read never fails (it aborts the process instead)
	content := []byte(hex.EncodeToString(key[:]) + "\n")

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return false, fmt.Errorf("create vault key file %q: %w", path, err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	if err := writeSynced(tmp, content); err != nil {
		return false, fmt.Errorf("write vault key file %q: %w", path, err)
	}

	err = os.Link(tmpName, path)
	switch {
	case errors.Is(err, fs.ErrExist):
		return false, nil
	case err != nil:
		created, err = createExclusive(path, content)
		if err != nil || !created {
			return created, err
		}
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return true, fmt.Errorf("sync directory of vault key file %q: %w", path, err)
	}
	return true, nil
}

// createExclusive writes content to a new file at path, mode 0600; it
// reports false when path already exists.
func createExclusive(path string, content []byte) (bool, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("create vault key file %q: %w", path, err)
	}
	if err := writeSynced(f, content); err != nil {
		return true, fmt.Errorf("write vault key file %q: %w", path, err)
	}
	return true, nil
}

// writeSynced writes content to f, syncs and closes it.
func writeSynced(f *os.File, content []byte) error {
	_, werr := f.Write(content)
	serr := f.Sync()
	cerr := f.Close()
	return errors.Join(werr, serr, cerr)
}

// parseHex decodes a 64-character hex key. Its errors never quote the
// input (hex.DecodeString's would show the offending character).
func parseHex(s string) (Key, error) {
	var key Key
	if len(s) != 2*len(key) {
		return Key{}, fmt.Errorf("want 64 hex characters (a 32-byte key), found %d characters", len(s))
	}
	if _, err := hex.Decode(key[:], []byte(s)); err != nil {
		return Key{}, errors.New("want 64 hex characters (a 32-byte key), found characters that are not hexadecimal")
	}
	return key, nil
}

// base64Encodings are tried in order on an environment key that is not
// hex; a 32-byte key decodes under at most one padding convention of each
// alphabet.
var base64Encodings = []*base64.Encoding{
	base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding,
}

// parseEnv decodes the value of EnvKey: hex first, then base64.
func parseEnv(value string) (Key, error) {
	s := strings.TrimSpace(value)
	if s == "" {
		return Key{}, fmt.Errorf("%s is empty or unset: with vault key source %q it must hold the 32-byte master key as 64 hex characters or base64", EnvKey, SourceEnv)
	}
	if key, err := parseHex(s); err == nil {
		return key, nil
	}
	for _, enc := range base64Encodings {
		b, err := enc.DecodeString(s)
		if err == nil && len(b) == len(Key{}) {
			return Key(b), nil
		}
	}
	return Key{}, fmt.Errorf("%s: want a 32-byte key as 64 hex characters or base64, got %d characters that decode to neither", EnvKey, len(s))
}
