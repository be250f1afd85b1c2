package decode

// PrefixLen is how many bytes of a TCP stream a StreamPrefix keeps: enough
// for the SNI of common ClientHellos and the Host of a request head.
const PrefixLen = 1536

// StreamPrefix reassembles the first bytes of one direction of a TCP
// stream from its segments, for ParseSNI and ParseHTTPHost when a
// ClientHello or request head spans several segments. It is bounded (a
// fixed array, no allocation) and simple on purpose: segments are taken
// in order only; a gap, a retransmission of other bytes or a segment the
// capture truncated (snaplen) ends reassembly, since the bytes after it
// are unknown. Out-of-order arrival is rare for the first flight of a
// connection; what it costs is one unreadable SNI, never a wrong one.
//
// The zero value is empty; Reset reuses a value for another stream.
type StreamPrefix struct {
	buf    [PrefixLen]byte
	n      int
	next   uint32 // sequence number of the next expected byte
	closed bool   // no more bytes can be appended
}

// Reset empties p.
func (p *StreamPrefix) Reset() { p.n, p.next, p.closed = 0, 0, false }

// Bytes returns the bytes reassembled so far; valid until the next Add or
// Reset.
func (p *StreamPrefix) Bytes() []byte { return p.buf[:p.n] }

// Closed reports whether more bytes can no longer be appended.
func (p *StreamPrefix) Closed() bool { return p.closed }

// Add appends payload, carried by a segment with sequence number seq, and
// reports whether the bytes grew. The first call fixes where the stream
// starts. truncated says that the capture kept only the head of the
// segment (payload is shorter than the segment's data): its bytes are
// kept and reassembly closes behind them. A segment that repeats bytes
// already held (a retransmission) is ignored.
func (p *StreamPrefix) Add(seq uint32, payload []byte, truncated bool) bool {
	if p.closed || len(payload) == 0 {
		return false
	}
	if p.n > 0 && seq != p.next {
		if int32(seq-p.next) < 0 {
			return false // retransmission or overlap: keep what we have
		}
		p.closed = true // a gap: the bytes in it are unknown
		return false
	}
	c := copy(p.buf[p.n:], payload)
	p.n += c
	p.next = seq + uint32(len(payload))
	if truncated || p.n == len(p.buf) {
		p.closed = true
	}
	return c > 0
}
