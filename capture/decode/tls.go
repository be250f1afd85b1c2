package decode

import (
	"encoding/binary"
	"errors"
)

// MaxHostLen is the longest host name the SNI and Host parsers return
// (a DNS name's text form, RFC 1035). Longer names are refused.
const MaxHostLen = 253

// Errors of ParseSNI and ParseHTTPHost. Sentinels, so a caller can count
// them by kind without allocating.
var (
	// ErrIncomplete: the bytes end before the answer. More bytes of the
	// same stream may give one (see StreamPrefix); a caller that has no
	// more gives up.
	ErrIncomplete = errors.New("decode: need more bytes")
	// ErrNotClientHello: the stream does not start with a TLS handshake
	// record holding a ClientHello.
	ErrNotClientHello = errors.New("tls: not a ClientHello")
	// ErrMalformed: a length field contradicts the bytes around it.
	ErrMalformed = errors.New("tls: malformed ClientHello")
	// ErrNoSNI: a complete ClientHello without a server_name extension.
	ErrNoSNI = errors.New("tls: no server name")
	// ErrBadHost: the name is empty, too long or holds a byte a host
	// name cannot hold.
	ErrBadHost = errors.New("decode: host name not well-formed")
	// ErrNotHTTP: the stream does not start with an HTTP/1.x request line.
	ErrNotHTTP = errors.New("http: not an HTTP/1.x request")
	// ErrNoHost: a complete request head without a Host header.
	ErrNoHost = errors.New("http: no Host header")
)

const (
	tlsRecordHandshake = 22
	tlsClientHello     = 1
	extServerName      = 0
	sniHostName        = 0
)

// ParseSNI returns the server name of the TLS ClientHello at the start of
// stream, the first bytes a client sent on a TCP connection. The name is
// written lower-cased, without a trailing dot, into dst[:0] and returned;
// with cap(dst) >= MaxHostLen ParseSNI does not allocate.
//
// stream may be a prefix of the ClientHello (a capture truncated by its
// snaplen, or the first of several segments): the extensions are walked in
// order and the name is returned as soon as its extension is complete,
// every length read on the way being checked against its enclosing one.
// When the bytes end first, the error is ErrIncomplete. A ClientHello
// split over several TLS records is read from its first record only.
//
// The name is returned only when well-formed: a host_name entry of the
// server_name extension (RFC 6066 section 3) of 1 to MaxHostLen bytes of
// printable ASCII without space (0x21-0x7e). Anything else is ErrBadHost:
// the parser never returns control bytes or non-ASCII.
func ParseSNI(stream, dst []byte) ([]byte, error) {
	// Record header: type, version (2), length (2).
	if len(stream) < 1 {
		return nil, ErrIncomplete
	}
	if stream[0] != tlsRecordHandshake {
		return nil, ErrNotClientHello
	}
	if len(stream) < 5 {
		return nil, ErrIncomplete
	}
	if stream[1] != 3 { // SSL 3.0 / TLS 1.x record versions are 3.x
		return nil, ErrNotClientHello
	}
	recLen := int(binary.BigEndian.Uint16(stream[3:]))
	if recLen < 4 || recLen > 1<<14+2048 {
		return nil, ErrMalformed
	}
	rec := stream[5:]
	if len(rec) > recLen {
		rec = rec[:recLen]
	}
	// Handshake header: type, length (3).
	if len(rec) < 4 {
		return nil, ErrIncomplete
	}
	if rec[0] != tlsClientHello {
		return nil, ErrNotClientHello
	}
	hsLen := int(rec[1])<<16 | int(rec[2])<<8 | int(rec[3])
	r := reader{b: rec[4:], end: hsLen}
	// A handshake message may continue in the next record, so its length
	// may exceed this record's: r.end bounds the fields, r.b the bytes.
	r.skip(2 + 32)       // client_version, random
	r.skipVector(1)      // session_id
	r.skipVector(2)      // cipher_suites
	r.skipVector(1)      // compression_methods
	extEnd := r.vector() // extensions block: its end offset
	if r.err != nil {
		return nil, r.err
	}
	if extEnd < 0 {
		// A ClientHello that ends before its extensions has none.
		return nil, ErrNoSNI
	}
	for r.off < extEnd {
		typ := r.u16()
		n := r.u16()
		if r.err != nil {
			return nil, r.err
		}
		if r.off+n > extEnd {
			return nil, ErrMalformed
		}
		if typ != extServerName {
			r.skip(n)
			continue
		}
		return sniName(r, n, dst)
	}
	return nil, ErrNoSNI
}

// sniName reads the server_name extension's body (n bytes at r.off) and
// returns its host_name entry.
func sniName(r reader, n int, dst []byte) ([]byte, error) {
	end := r.off + n
	listLen := r.u16()
	if r.err != nil {
		return nil, r.err
	}
	if r.off+listLen != end {
		return nil, ErrMalformed
	}
	for r.off < end {
		typ := r.u8()
		l := r.u16()
		if r.err != nil {
			return nil, r.err
		}
		if r.off+l > end {
			return nil, ErrMalformed
		}
		if typ != sniHostName {
			r.skip(l)
			continue
		}
		name := r.bytes(l)
		if r.err != nil {
			return nil, r.err
		}
		return appendHost(dst[:0], name)
	}
	return nil, ErrNoSNI
}

// appendHost validates name as a host name and appends it, lower-cased and
// without one trailing dot, to dst.
func appendHost(dst, name []byte) ([]byte, error) {
	if len(name) > 0 && name[len(name)-1] == '.' {
		name = name[:len(name)-1]
	}
	if len(name) == 0 || len(name) > MaxHostLen {
		return nil, ErrBadHost
	}
	for _, c := range name {
		if c < 0x21 || c > 0x7e {
			return nil, ErrBadHost
		}
	}
	at := len(dst)
	dst = append(dst, name...)
	for i := at; i < len(dst); i++ {
		if c := dst[i]; 'A' <= c && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst, nil
}

// reader walks a length-prefixed structure of which b holds a prefix and
// end is the announced length. Reading past end is ErrMalformed (the
// structure contradicts itself); reading past b within end is
// ErrIncomplete (the bytes are not all there). The first error sticks.
type reader struct {
	b   []byte
	end int
	off int
	err error
}

func (r *reader) need(n int) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || r.off+n > r.end {
		r.err = ErrMalformed
		return false
	}
	if r.off+n > len(r.b) {
		r.err = ErrIncomplete
		return false
	}
	return true
}

func (r *reader) skip(n int) {
	if r.need(n) {
		r.off += n
	}
}

func (r *reader) u8() int {
	if !r.need(1) {
		return 0
	}
	r.off++
	return int(r.b[r.off-1])
}

func (r *reader) u16() int {
	if !r.need(2) {
		return 0
	}
	r.off += 2
	return int(binary.BigEndian.Uint16(r.b[r.off-2:]))
}

func (r *reader) bytes(n int) []byte {
	if !r.need(n) {
		return nil
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

// skipVector skips a vector whose length is a prefix of size bytes.
func (r *reader) skipVector(size int) {
	var n int
	if size == 1 {
		n = r.u8()
	} else {
		n = r.u16()
	}
	r.skip(n)
}

// vector reads a 2-byte vector length and returns the offset where the
// vector ends, checked against r.end; -1 when the structure ends exactly
// here (an optional trailing vector that is absent).
func (r *reader) vector() int {
	if r.err == nil && r.off == r.end {
		return -1
	}
	n := r.u16()
	if r.err != nil {
		return 0
	}
	if r.off+n > r.end {
		r.err = ErrMalformed
		return 0
	}
	return r.off + n
}
