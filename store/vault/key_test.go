package vault_test

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"netmon/store/vault"
)

// keyHex is the hex form of testKey(0x5a).
var keyHex = strings.Repeat("5a", 32)

func TestLoadKeyFile(t *testing.T) {
	tests := []struct {
		desc      string
		content   *string // nil: no file
		mode      os.FileMode
		want      vault.Key
		generated bool
		errHas    string
	}{
		{desc: "existing file", content: ptr(keyHex), mode: 0o600, want: testKey(0x5a)},
		{desc: "surrounding whitespace", content: ptr("\n  " + keyHex + "\r\n\t"), mode: 0o600, want: testKey(0x5a)},
		{desc: "upper-case hex", content: ptr(strings.ToUpper(keyHex)), mode: 0o600, want: testKey(0x5a)},
		{desc: "group-readable file still loads", content: ptr(keyHex), mode: 0o644, want: testKey(0x5a)},
		{desc: "missing file is generated", generated: true},
		{desc: "empty file", content: ptr(""), mode: 0o600, errHas: "found 0 characters"},
		{desc: "short", content: ptr(keyHex[:62]), mode: 0o600, errHas: "found 62 characters"},
		{desc: "not hex", content: ptr(strings.Repeat("zq", 32)), mode: 0o600, errHas: "not hexadecimal"},
		{desc: "base64 is not accepted in files", content: ptr(base64.StdEncoding.EncodeToString(make([]byte, 32))), mode: 0o600, errHas: "found 44 characters"},
		{desc: "huge file", content: ptr(strings.Repeat("0", 10000)), mode: 0o600, errHas: "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "vault.key")
			if tt.content != nil {
				if err := os.WriteFile(path, []byte(*tt.content), tt.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.mode); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			key, generated, err := vault.LoadKey(vault.Config{Source: vault.SourceFile, File: path}, nil)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("LoadKey error = %v, want one containing %q", err, tt.errHas)
				}
				if tt.content != nil && len(*tt.content) >= 8 && strings.Contains(err.Error(), strings.TrimSpace(*tt.content)[:8]) {
					t.Errorf("error %q quotes the file's content", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadKey: %v", err)
			}
			if generated != tt.generated {
				t.Errorf("generated = %v, want %v", generated, tt.generated)
			}
			if tt.generated {
				checkGenerated(t, path, key)
				return
			}
			if key != tt.want {
				t.Error("LoadKey returned another key than the file's")
			}
		})
	}
}

// checkGenerated checks a freshly generated key file: 64 hex characters
// holding key, mode 0600, no temporary file left beside it.
func checkGenerated(t *testing.T, path string, key vault.Key) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSpace(string(data))
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(s) {
		t.Errorf("generated file holds %d characters, want 64 lower-case hex", len(s))
	}
	if s != hex.EncodeToString(key[:]) {
		t.Error("generated file does not hold the returned key")
	}
	if key == (vault.Key{}) {
		t.Error("generated key is all zeros")
	}
	if runtime.GOOS != "windows" {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("generated file mode = %o, want 600", st.Mode().Perm())
		}
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after generation, want only the key file", len(entries))
	}
}

func TestLoadKeyFileReused(t *testing.T) {
	cfg := vault.Config{File: filepath.Join(t.TempDir(), "vault.key")} // Source "" means file
	first, generated, err := vault.LoadKey(cfg, nil)
	if err != nil || !generated {
		t.Fatalf("first LoadKey: generated=%v, %v; want generated", generated, err)
	}
	second, generated, err := vault.LoadKey(cfg, nil)
	if err != nil || generated {
		t.Fatalf("second LoadKey: generated=%v, %v; want the existing file reused", generated, err)
	}
	if first != second {
		t.Error("second start loaded another key")
	}
}

// TestLoadKeyFileConcurrent starts several loaders on a missing file at
// once, as two hubs sharing a directory would: exactly one generates, and
// all end with the same key.
func TestLoadKeyFileConcurrent(t *testing.T) {
	cfg := vault.Config{File: filepath.Join(t.TempDir(), "vault.key")}
	const loaders = 8
	keys := make([]vault.Key, loaders)
	gens := make([]bool, loaders)
	errs := make([]error, loaders)
	var wg sync.WaitGroup
	for i := range loaders {
		wg.Go(func() { keys[i], gens[i], errs[i] = vault.LoadKey(cfg, nil) })
	}
	wg.Wait()
	generated := 0
	for i := range loaders {
		if errs[i] != nil {
			t.Fatalf("loader %d: %v", i, errs[i])
		}
		if gens[i] {
			generated++
		}
		if keys[i] != keys[0] {
			t.Errorf("loader %d got another key than loader 0", i)
		}
	}
	if generated != 1 {
		t.Errorf("%d loaders generated the key, want 1", generated)
	}
}

func TestLoadKeyFileMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent", "vault.key")
	if _, _, err := vault.LoadKey(vault.Config{File: path}, nil); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadKey error = %v, want one naming %s", err, path)
	}
}

func TestFileModeTooOpen(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	dir := t.TempDir()
	tests := []struct {
		mode os.FileMode
		want bool
	}{{0o600, false}, {0o400, false}, {0o640, true}, {0o604, true}, {0o660, true}}
	for _, tt := range tests {
		path := filepath.Join(dir, tt.mode.String())
		if err := os.WriteFile(path, []byte(keyHex), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tt.mode); err != nil {
			t.Fatal(err)
		}
		got, err := vault.FileModeTooOpen(path)
		if err != nil || got != tt.want {
			t.Errorf("FileModeTooOpen(%o) = %v, %v; want %v", tt.mode, got, err, tt.want)
		}
	}
	if _, err := vault.FileModeTooOpen(filepath.Join(dir, "absent")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("FileModeTooOpen(absent) error = %v, want fs.ErrNotExist", err)
	}
}

func TestLoadKeyEnv(t *testing.T) {
	raw := testKey(0x5a)
	tests := []struct {
		desc   string
		value  string
		errHas string
	}{
		{desc: "hex", value: keyHex},
		{desc: "hex with newline", value: keyHex + "\n"},
		{desc: "base64 standard", value: base64.StdEncoding.EncodeToString(raw[:])},
		{desc: "base64 raw standard", value: base64.RawStdEncoding.EncodeToString(raw[:])},
		{desc: "base64 URL", value: base64.URLEncoding.EncodeToString(raw[:])},
		{desc: "base64 raw URL", value: base64.RawURLEncoding.EncodeToString(raw[:])},
		{desc: "unset", value: "", errHas: vault.EnvKey + " is empty or unset"},
		{desc: "blank", value: "  \n", errHas: vault.EnvKey + " is empty or unset"},
		{desc: "short hex", value: keyHex[:62], errHas: "got 62 characters"},
		{desc: "base64 of 16 bytes", value: base64.StdEncoding.EncodeToString(raw[:16]), errHas: "decode to neither"},
		{desc: "base64 of 33 bytes", value: base64.StdEncoding.EncodeToString(append(raw[:], 0)), errHas: "decode to neither"},
		{desc: "garbage", value: "correct horse battery staple!!", errHas: "decode to neither"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			dir := t.TempDir()
			getenv := func(name string) string {
				if name != vault.EnvKey {
					t.Errorf("getenv(%q), want %q", name, vault.EnvKey)
				}
				return tt.value
			}
			// File is set to prove the env source never writes it.
			cfg := vault.Config{Source: vault.SourceEnv, File: filepath.Join(dir, "vault.key")}
			key, generated, err := vault.LoadKey(cfg, getenv)
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("env source wrote %d files", len(entries))
			}
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("LoadKey error = %v, want one containing %q", err, tt.errHas)
				}
				if v := strings.TrimSpace(tt.value); len(v) >= 8 && strings.Contains(err.Error(), v[:8]) {
					t.Errorf("error %q quotes the variable's value", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadKey: %v", err)
			}
			if generated {
				t.Error("env source reported generated=true")
			}
			if key != raw {
				t.Error("LoadKey returned another key than the variable's")
			}
		})
	}
}

func TestLoadKeyUnknownSource(t *testing.T) {
	_, _, err := vault.LoadKey(vault.Config{Source: "kms"}, nil)
	if err == nil || !strings.Contains(err.Error(), `"kms"`) {
		t.Errorf("LoadKey error = %v, want one naming the source", err)
	}
}

func TestDefaultConfig(t *testing.T) {
	if got := vault.DefaultConfig(); got != (vault.Config{Source: "file", File: "vault.key"}) {
		t.Errorf("DefaultConfig() = %+v", got)
	}
}

func ptr[T any](v T) *T { return &v }
