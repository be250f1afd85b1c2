package compliance

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// Kinds of compliance record (the second byte of the encoding).
const (
	KindFlow   uint8 = 1
	KindSyslog uint8 = 2
	KindDNS    uint8 = 3
	KindReport uint8 = 4 // a generated report's hashes (report.go)
)

// Field classes: how a field is masked in an evidence bundle.
const (
	plain   = iota // never masked (ports, counters, protocol)
	piiIP          // an IP address: pseudonym "ip-…"
	piiName        // a user or host name: pseudonym "name-…"
	piiText        // free text: addresses, MACs and user=… inside replaced
)

type field struct {
	name  string
	class int
}

// schema is the fixed field order of each kind: the encoding, the stored
// vals and the bundle's "f" array all follow it.
var schema = map[uint8][]field{
	KindFlow: {
		{"exporter", piiIP}, {"src", piiIP}, {"src_port", plain}, {"dst", piiIP},
		{"dst_port", plain}, {"proto", plain}, {"packets", plain}, {"octets", plain},
	},
	KindSyslog: {
		{"source", piiIP}, {"host", piiName}, {"facility", plain}, {"severity", plain},
		{"tag", plain}, {"message", piiText},
	},
	KindDNS: {
		{"agent_id", plain}, {"agent_ip", piiIP}, {"process", plain}, {"domain", plain}, {"queries", plain},
	},
	KindReport: {
		{"sha256", plain}, {"data_sha256", plain}, {"filename", plain},
	},
}

var kindNames = map[uint8]string{KindFlow: "flow", KindSyslog: "syslog", KindDNS: "dns", KindReport: "report"}

// KindName returns the bundle name of a kind ("" when unknown).
func KindName(k uint8) string { return kindNames[k] }

func kindOf(name string) (uint8, bool) {
	for k, n := range kindNames {
		if n == name {
			return k, true
		}
	}
	return 0, false
}

// SaltSize is the length of a record's random salt.
const SaltSize = 16

// Version is the first byte of every encoding.
const Version = 1

// Tags of an encoded field.
const (
	tagPlain  = 0
	tagCommit = 1
)

// Record is one compliance record before encoding.
type Record struct {
	Seq  uint64
	At   int64 // append time, Unix seconds (places the record in an hour)
	TS   int64 // the record's own time, Unix seconds
	Kind uint8
	Vals []string // in schema order
	Salt [SaltSize]byte
}

// Commit is the commitment to a PII field's value: SHA-256(salt || index
// || value). The salt stays in the hub, so a masked bundle's commitments
// cannot be brute-forced back to addresses.
func Commit(salt []byte, index int, value string) [32]byte {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte{byte(index)})
	h.Write([]byte(value))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Encode appends the canonical encoding of r to dst (README "Compliance
// log"): version, kind, seq, at, ts, field count, then per field a tag,
// a big-endian u32 length and the bytes: the value itself for plain
// fields, its 32-byte commitment for PII fields. commits, when not nil,
// gives the commitment of field i instead of computing it from the value
// (a masked bundle carries commitments, not values).
func Encode(dst []byte, r *Record, commits map[int][32]byte) ([]byte, error) {
	fs, ok := schema[r.Kind]
	if !ok {
		return dst, fmt.Errorf("unknown record kind %d", r.Kind)
	}
	if len(r.Vals) != len(fs) {
		return dst, fmt.Errorf("%s record: %d fields, want %d", KindName(r.Kind), len(r.Vals), len(fs))
	}
	dst = append(dst, Version, r.Kind)
	dst = binary.BigEndian.AppendUint64(dst, r.Seq)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.At))
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.TS))
	dst = append(dst, byte(len(fs)))
	for i, f := range fs {
		if f.class == plain {
			dst = append(dst, tagPlain)
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(r.Vals[i])))
			dst = append(dst, r.Vals[i]...)
			continue
		}
		c, given := commits[i]
		if !given {
			c = Commit(r.Salt[:], i, r.Vals[i])
		}
		dst = append(dst, tagCommit)
		dst = binary.BigEndian.AppendUint32(dst, 32)
		dst = append(dst, c[:]...)
	}
	return dst, nil
}

// Next returns h_i = SHA-256(h_{i-1} || enc).
func Next(prev [32]byte, enc []byte) [32]byte {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(enc)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// packVals stores field values as u32 length + bytes each.
func packVals(dst []byte, vals []string) []byte {
	for _, v := range vals {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
		dst = append(dst, v...)
	}
	return dst
}

var errVals = errors.New("corrupt stored values")

func unpackVals(b []byte) ([]string, error) {
	var out []string
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, errVals
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint32(len(b)) < n {
			return nil, errVals
		}
		out = append(out, string(b[:n]))
		b = b[n:]
	}
	return out, nil
}
