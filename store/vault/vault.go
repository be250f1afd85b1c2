// Package vault seals the hub's stored secrets (device SNMP credentials,
// AI provider keys, the firewall API token) with AES-256-GCM under one
// master key, and loads that key from a file or the environment (spec
// section 5 item 12).
//
// It is a leaf: it imports nothing of netmon. The store keeps sealed blobs
// as opaque bytes, and the services that own a secret call Seal and Open,
// passing as associated data the identity of the row and column the blob
// belongs to ("devices/42/community"), so a ciphertext copied into another
// row or column fails authentication instead of decrypting there
// (RELIABILITY case 30).
//
// A lost master key makes the sealed secrets unrecoverable, and a wrong
// one would otherwise surface only later as scattered decryption errors:
// CheckKey compares the key with a check value recorded in the database at
// first start, so a wrong key stops the hub at start-up with a clear
// message.
package vault

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
)

// ErrDecrypt is returned (wrapped) by Open for every blob it refuses: too
// short, an unknown version, or a failed authentication (wrong key, wrong
// associated data, altered bytes). Callers test it with errors.Is.
var ErrDecrypt = errors.New("vault: cannot decrypt")

// version1 is the first byte of every blob sealed by this version: a
// 12-byte random nonce, then the GCM ciphertext and 16-byte tag follow.
// A later format (another cipher, a key id for rotation) gets a new
// number, so old blobs stay readable.
const version1 = 1

// checkLabel is the message whose HMAC under the key is the key check
// value. Changing it would make every existing check value mismatch.
const checkLabel = "netmon vault key check v1"

// Key is a 32-byte AES-256 master key. Its String, GoString and LogValue
// methods print a placeholder, so a key that reaches a log line or an
// error by mistake does not leak.
type Key [32]byte

// String returns a placeholder, never the key.
func (Key) String() string { return "vault.Key(redacted)" }

// GoString returns a placeholder, never the key (for %#v).
func (k Key) GoString() string { return k.String() }

// LogValue returns a placeholder, never the key (for log/slog).
func (k Key) LogValue() slog.Value { return slog.StringValue(k.String()) }

// Vault seals and opens secrets under one master key. It is safe for
// concurrent use.
type Vault struct {
	aead  cipher.AEAD
	check string
}

// New returns a vault using key.
func New(key Key) (*Vault, error) {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, fmt.Errorf("vault: create AES cipher: %w", err)
	}
	// Random 96-bit nonces, prepended by Seal and read back by Open. The
	// limit of 2^32 seals per key is far beyond the few hundred secrets a
	// hub holds, and random nonces need no counter to keep across
	// restarts or replicas.
	aead, err := cipher.NewGCMWithRandomNonce(block)
	if err != nil {
		return nil, fmt.Errorf("vault: create GCM: %w", err)
	}
	mac := hmac.New(sha256.New, key[:])
	mac.Write([]byte(checkLabel))
	return &Vault{aead: aead, check: hex.EncodeToString(mac.Sum(nil)[:16])}, nil
}

// Seal encrypts plaintext and returns the blob to store: the version byte
// (1), a 12-byte random nonce, then the ciphertext and its 16-byte tag.
// associatedData is authenticated but not stored: pass the identity of
// the row and column the blob is written to, and the same value to Open.
func (v *Vault) Seal(plaintext, associatedData []byte) ([]byte, error) {
	out := make([]byte, 1, 1+v.aead.Overhead()+len(plaintext))
	out[0] = version1
	return v.aead.Seal(out, nil, plaintext, additional(version1, associatedData)), nil
}

// Open decrypts a blob made by Seal with the same associated data. Any
// other input, however malformed, returns an error wrapping ErrDecrypt.
func (v *Vault) Open(blob, associatedData []byte) ([]byte, error) {
	if len(blob) < 1+v.aead.Overhead() {
		return nil, fmt.Errorf("%w: blob of %d bytes is shorter than the %d-byte minimum", ErrDecrypt, len(blob), 1+v.aead.Overhead())
	}
	if blob[0] != version1 {
		return nil, fmt.Errorf("%w: unknown blob version %d", ErrDecrypt, blob[0])
	}
	plaintext, err := v.aead.Open(nil, nil, blob[1:], additional(blob[0], associatedData))
	if err != nil {
		// GCM does not say why; the message lists what it can be.
		return nil, fmt.Errorf("%w: authentication failed (wrong key, wrong associated data or altered blob)", ErrDecrypt)
	}
	return plaintext, nil
}

// additional is the AEAD associated data: the version byte, so a blob
// cannot be relabelled as another format, then the caller's data.
func additional(version byte, associatedData []byte) []byte {
	ad := make([]byte, 0, 1+len(associatedData))
	ad = append(ad, version)
	return append(ad, associatedData...)
}

// CheckValue returns the key check value: the first 16 bytes of
// HMAC-SHA256(key, "netmon vault key check v1"), in hex. It reveals
// nothing usable about the key and is stored in clear in the database, so
// a start with another key can be refused (see CheckKey).
func (v *Vault) CheckValue() string { return v.check }
