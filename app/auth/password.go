package auth

import (
	"fmt"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"
)

// BcryptCost is the work factor of stored password hashes. 10 keeps a
// login at about 50 ms of one core on the machines netmon targets, which
// with the throttle (5 checks per address per minute) makes guessing
// slow without making login a CPU weapon; the README quotes the measured
// login rate.
const BcryptCost = 10

// Password length limits: at least 8 characters (spec), at most 72 bytes
// because bcrypt ignores anything longer (refusing beats silently
// truncating).
const (
	MinPasswordLen      = 8
	MaxPasswordBytes    = 72
	sessionTokenBytes   = 32
	apiTokenPrefix      = "bnt_"
	sessionCookieName   = "nm_session"
	sessionCookieMaxAge = 604800
)

// SessionCookie is the name of the session cookie.
const SessionCookie = sessionCookieName

// SessionMaxAge is the session lifetime in seconds (spec: 604800).
const SessionMaxAge = sessionCookieMaxAge

// CheckPasswordPolicy returns a user-facing error for an unacceptable password.
func CheckPasswordPolicy(pw string) error {
	if utf8.RuneCountInString(pw) < MinPasswordLen {
		return invalidField("password", "password must be at least %d characters", MinPasswordLen)
	}
	if len(pw) > MaxPasswordBytes {
		return invalidField("password", "password must be at most %d bytes", MaxPasswordBytes)
	}
	return nil
}

// HashPassword returns the bcrypt hash of pw after checking the policy.
func HashPassword(pw string) (string, error) {
	if err := CheckPasswordPolicy(pw); err != nil {
		return "", err
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pw), BcryptCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// dummyHash is checked against when the user does not exist, so that a
// login takes as long for an unknown name as for a wrong password and the
// response time does not reveal which names exist.
// It is made on first use, not at start-up: a bcrypt hash costs about
// 60 ms, which every process start (even `netmon version`) would pay.
var dummyHash = sync.OnceValue(func() []byte {
	h, err := bcrypt.GenerateFromPassword([]byte("netmon-timing-equaliser"), BcryptCost)
	if err != nil {
		panic(err)
	}
	return h
})

// checkPassword compares pw with hash (empty hash: the dummy, always false).
func checkPassword(hash, pw string) bool {
	if hash == "" {
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

// looksLikeSessionToken accepts exactly 64 lower-case hex characters.
func looksLikeSessionToken(s string) bool {
	if len(s) != 2*sessionTokenBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
