package vault_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store/vault"
)

// testKey returns a fixed key whose bytes all equal b.
func testKey(b byte) vault.Key {
	var k vault.Key
	for i := range k {
		k[i] = b
	}
	return k
}

func newVault(t testing.TB, key vault.Key) *vault.Vault {
	t.Helper()
	v, err := vault.New(key)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return v
}

func seal(t testing.TB, v *vault.Vault, plaintext, ad string) []byte {
	t.Helper()
	blob, err := v.Seal([]byte(plaintext), []byte(ad))
	if err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return blob
}

func TestRoundTrip(t *testing.T) {
	v := newVault(t, testKey(1))
	tests := []struct {
		desc      string
		plaintext string
		ad        string
	}{
		{"community string", "public", "devices/42/community"},
		{"empty secret", "", "devices/42/v3_auth_pass"},
		{"empty associated data", "s3cret", ""},
		{"binary and long", strings.Repeat("\x00\xff", 4096), "ai_providers/1/api_key"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			blob := seal(t, v, tt.plaintext, tt.ad)
			if got, want := len(blob), 1+12+len(tt.plaintext)+16; got != want {
				t.Errorf("blob length = %d, want %d (version, nonce, ciphertext, tag)", got, want)
			}
			if blob[0] != 1 {
				t.Errorf("version byte = %d, want 1", blob[0])
			}
			if len(tt.plaintext) > 4 && bytes.Contains(blob, []byte(tt.plaintext)) {
				t.Error("blob contains the plaintext")
			}
			got, err := v.Open(blob, []byte(tt.ad))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if diff := cmp.Diff(string(got), tt.plaintext); diff != "" {
				t.Errorf("Open (-got, +want):\n%s", diff)
			}
		})
	}
}

func TestSealUsesFreshNonces(t *testing.T) {
	v := newVault(t, testKey(1))
	a, b := seal(t, v, "same", "ad"), seal(t, v, "same", "ad")
	if bytes.Equal(a, b) {
		t.Error("sealing the same plaintext twice gave the same blob")
	}
}

// TestOpenRefuses holds every way Open must fail: always ErrDecrypt,
// never a panic, never a partial plaintext.
func TestOpenRefuses(t *testing.T) {
	v := newVault(t, testKey(1))
	other := newVault(t, testKey(2))
	const ad = "devices/42/community"
	blob := seal(t, v, "public", ad)
	flip := func(i int) []byte {
		b := bytes.Clone(blob)
		b[i] ^= 0x01
		return b
	}
	version := func(n byte) []byte {
		b := bytes.Clone(blob)
		b[0] = n
		return b
	}
	tests := []struct {
		desc  string
		vault *vault.Vault
		blob  []byte
		ad    string
	}{
		{"wrong associated data", v, blob, "devices/43/community"},
		{"other column of the same row", v, blob, "devices/42/v3_auth_pass"},
		{"no associated data", v, blob, ""},
		{"tampered nonce byte", v, flip(1), ad},
		{"tampered ciphertext byte", v, flip(14), ad},
		{"tampered tag byte", v, flip(len(blob) - 1), ad},
		{"truncated by one byte", v, blob[:len(blob)-1], ad},
		{"truncated to the header", v, blob[:13], ad},
		{"shorter than the minimum", v, blob[:28], ad},
		{"empty", v, nil, ad},
		{"version 0", v, version(0), ad},
		{"version 2", v, version(2), ad},
		{"wrong key", other, blob, ad},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := tt.vault.Open(tt.blob, []byte(tt.ad))
			if !errors.Is(err, vault.ErrDecrypt) {
				t.Fatalf("Open error = %v, want ErrDecrypt", err)
			}
			if got != nil {
				t.Errorf("Open returned %q with its error, want nil", got)
			}
		})
	}
}

// TestSwappedRows is RELIABILITY case 30: the row id is in the associated
// data, so moving one row's ciphertext to another row fails instead of
// decrypting to the other device's secret.
func TestSwappedRows(t *testing.T) {
	v := newVault(t, testKey(1))
	rows := map[int64][]byte{
		41: seal(t, v, "community-of-41", "devices/41/community"),
		42: seal(t, v, "community-of-42", "devices/42/community"),
	}
	rows[41], rows[42] = rows[42], rows[41]
	for id, blob := range rows {
		if got, err := v.Open(blob, fmt.Appendf(nil, "devices/%d/community", id)); !errors.Is(err, vault.ErrDecrypt) {
			t.Errorf("row %d after swap: Open = %q, %v; want ErrDecrypt", id, got, err)
		}
	}
}

func TestCheckValue(t *testing.T) {
	a1, a2, b := newVault(t, testKey(1)), newVault(t, testKey(1)), newVault(t, testKey(2))
	if a1.CheckValue() != a2.CheckValue() {
		t.Error("same key gave different check values")
	}
	if a1.CheckValue() == b.CheckValue() {
		t.Error("different keys gave the same check value")
	}
	// Golden: the check value is stored in databases, so its derivation
	// (HMAC-SHA256 with the v1 label, 16 bytes, hex) must never change.
	if got, want := a1.CheckValue(), "e2e4159b8c27b6c06b6b71a8cb62de9f"; got != want {
		t.Errorf("CheckValue() = %s, want %s", got, want)
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	k := testKey(0xab)
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("oops", "key", k)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s %x %q", k, k, k, k, k, k), logged.String()} {
		if strings.Contains(strings.ToLower(s), "abab") || strings.Contains(s, "171,171") {
			t.Errorf("key material printed: %s", s)
		}
	}
}

func FuzzOpen(f *testing.F) {
	v := newVault(f, testKey(1))
	good := seal(f, v, "public", "devices/1/community")
	f.Add(good, []byte("devices/1/community"))
	f.Add(good[:len(good)-1], []byte("devices/1/community"))
	f.Add([]byte{}, []byte{})
	f.Add([]byte{1}, []byte("x"))
	f.Add(bytes.Repeat([]byte{1}, 29), []byte(nil))
	f.Add(append([]byte{2}, good[1:]...), []byte("devices/1/community"))
	f.Fuzz(func(t *testing.T, blob, ad []byte) {
		got, err := v.Open(blob, ad)
		if err != nil {
			if !errors.Is(err, vault.ErrDecrypt) {
				t.Fatalf("Open error %v does not wrap ErrDecrypt", err)
			}
			return
		}
		// Only a genuine blob opens: re-sealing must round-trip.
		again, err := v.Open(seal(t, v, string(got), string(ad)), ad)
		if err != nil || !bytes.Equal(again, got) {
			t.Fatalf("re-seal of an opened blob: %q, %v", again, err)
		}
	})
}
