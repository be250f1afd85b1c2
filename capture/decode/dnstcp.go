package decode

import "encoding/binary"

// SplitDNSTCP returns the first DNS message of a DNS-over-TCP segment
// and the bytes after it. On TCP each message is preceded by its length
// in two bytes (RFC 1035 section 4.2.2, RFC 7766); a client may send
// several queries in one segment. ErrIncomplete when data ends before
// the message does (a message split over segments, or cut by the
// capture's snaplen): the caller drops the rest of the segment, since
// the agent reassembles no DNS stream. ErrShort when data is empty or
// holds one byte, or the length announces less than a DNS header.
// It does not allocate: msg and rest are slices of data.
func SplitDNSTCP(data []byte) (msg, rest []byte, err error) {
	if len(data) < 2 {
		return nil, nil, ErrShort
	}
	n := int(binary.BigEndian.Uint16(data))
	if n < headerLen {
		return nil, nil, ErrShort
	}
	if len(data) < 2+n {
		return nil, nil, ErrIncomplete
	}
	return data[2 : 2+n], data[2+n:], nil
}
