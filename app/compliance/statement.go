package compliance

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Statement is a signed tree head: an hourly checkpoint or a daily seal.
// Its Body (the exact signed bytes) is text, one "name value" per line:
//
//	netmon compliance checkpoint v1      (or "netmon compliance seal v1")
//	period 1764079200    the hour's (or day's) first second, Unix
//	day 2026-11-25       the UTC day whose tree it heads
//	size 1234            records of the day up to the period's end
//	first 1001           seq of the day's first record (0: none yet)
//	last 2234            seq of the last record covered (0: none ever)
//	root <hex>           RFC 6962 root of the day's tree at that size
//	start <hex>          chain value before the day's first record
//	chain <hex>          chain value h_last
//	prev <hex>           SHA-256 of the previous statement's body
//	time 1764082800      signing clock, Unix
//	key <hex>            key id: first 8 bytes of SHA-256(public key)
type Statement struct {
	Kind   string // "hourly" or "daily"
	Period int64
	Day    string
	Size   uint64
	First  uint64
	Last   uint64
	Root   [32]byte
	Start  [32]byte
	Chain  [32]byte
	Prev   [32]byte
	Time   int64
	Key    string
}

func header(kind string) string {
	if kind == "daily" {
		return "netmon compliance seal v1"
	}
	return "netmon compliance checkpoint v1"
}

// Body returns the signed text.
func (s Statement) Body() string {
	var b strings.Builder
	b.WriteString(header(s.Kind) + "\n")
	fmt.Fprintf(&b, "period %d\nday %s\nsize %d\nfirst %d\nlast %d\n", s.Period, s.Day, s.Size, s.First, s.Last)
	fmt.Fprintf(&b, "root %x\nstart %x\nchain %x\nprev %x\ntime %d\nkey %s\n", s.Root, s.Start, s.Chain, s.Prev, s.Time, s.Key)
	return b.String()
}

// ParseStatement reads a body back; Body(ParseStatement(b)) == b for a
// well-formed b (the verifier checks exactly that).
func ParseStatement(body string) (Statement, error) {
	var s Statement
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) != 12 {
		return s, errors.New("statement: want 12 lines")
	}
	switch lines[0] {
	case header("daily"):
		s.Kind = "daily"
	case header("hourly"):
		s.Kind = "hourly"
	default:
		return s, fmt.Errorf("statement: unknown header %q", lines[0])
	}
	want := []string{"period", "day", "size", "first", "last", "root", "start", "chain", "prev", "time", "key"}
	vals := map[string]string{}
	for i, l := range lines[1:] {
		name, v, ok := strings.Cut(l, " ")
		if !ok || name != want[i] {
			return s, fmt.Errorf("statement: line %d: want %q", i+2, want[i])
		}
		vals[name] = v
	}
	var err error
	num := func(n string) int64 {
		v, e := strconv.ParseInt(vals[n], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("statement: %s: %w", n, e)
		}
		return v
	}
	hash := func(n string) (out [32]byte) {
		b, e := hex.DecodeString(vals[n])
		if (e != nil || len(b) != 32) && err == nil {
			err = fmt.Errorf("statement: %s: not a 32-byte hex value", n)
		}
		copy(out[:], b)
		return out
	}
	s.Period, s.Day = num("period"), vals["day"]
	s.Size, s.First, s.Last = uint64(num("size")), uint64(num("first")), uint64(num("last"))
	s.Root, s.Start, s.Chain, s.Prev = hash("root"), hash("start"), hash("chain"), hash("prev")
	s.Time, s.Key = num("time"), vals["key"]
	if err == nil && s.Body() != body {
		err = errors.New("statement: not in canonical form")
	}
	return s, err
}

// KeyID names a public key in statements.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// LoadOrCreateKey reads the PEM (PKCS #8) ed25519 key at path, or creates
// it (mode 0600) with its public half at path+".pub" (PKIX PEM, 0644).
func LoadOrCreateKey(path string) (ed25519.PrivateKey, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generate compliance key: %w", err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(priv)
		if err != nil {
			return nil, fmt.Errorf("encode compliance key: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create compliance key %q: %w", path, err)
		}
		if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
			f.Close()
			return nil, fmt.Errorf("write compliance key %q: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("write compliance key %q: %w", path, err)
		}
		return priv, writePub(path+".pub", priv.Public().(ed25519.PublicKey))
	}
	if err != nil {
		return nil, fmt.Errorf("read compliance key %q: %w", path, err)
	}
	blk, _ := pem.Decode(raw)
	if blk == nil {
		return nil, fmt.Errorf("compliance key %q: no PEM block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("compliance key %q: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("compliance key %q: not an ed25519 key", path)
	}
	// The .pub is what an auditor is handed: rewrite it when missing.
	if _, err := os.Stat(path + ".pub"); errors.Is(err, os.ErrNotExist) {
		return priv, writePub(path+".pub", priv.Public().(ed25519.PublicKey))
	}
	return priv, nil
}

// PublicPEM is the PKIX PEM of pub (the .pub file's content).
func PublicPEM(pub ed25519.PublicKey) []byte {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func writePub(path string, pub ed25519.PublicKey) error {
	if err := os.WriteFile(path, PublicPEM(pub), 0o644); err != nil {
		return fmt.Errorf("write compliance public key: %w", err)
	}
	return nil
}

// ParsePublicPEM reads a .pub file's content.
func ParsePublicPEM(raw []byte) (ed25519.PublicKey, error) {
	blk, _ := pem.Decode(raw)
	if blk == nil {
		return nil, errors.New("public key: no PEM block")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("public key: not ed25519")
	}
	return pub, nil
}

// dayOf is the UTC day of a Unix second.
func dayOf(t int64) string { return time.Unix(t, 0).UTC().Format(time.DateOnly) }
