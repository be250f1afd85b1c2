// Package secret is the one implementation of netmon's bearer secrets:
// session and API tokens (app/auth), enroll and agent tokens and the
// static enroll secret (app/fleet). A leaf: it imports nothing of ours, so
// both services share it without importing each other.
//
// A token is a prefix and 256 random bits in hex. Its stored form is the
// hex SHA-256: the token carries enough entropy that a fast hash is
// enough (no bcrypt), and looking the hash up by index reveals nothing
// useful about the secret. Secrets an operator chose are compared with
// Equal, in constant time.
package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
)

// Bytes is the random length of a token: 32 bytes, 64 hex characters.
const Bytes = 32

// New returns prefix followed by Bytes random bytes in hex.
func New(prefix string) string {
	b := make([]byte, Bytes)
	// crypto/rand.Read never fails on the platforms Go supports (it
	// panics inside rather than return a short read).
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Hash is the stored form of a token: its SHA-256 in lower-case hex.
func Hash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// Equal compares two secrets in constant time. It compares their SHA-256,
// so the length of the stored secret does not leak either.
func Equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
