package decode

import "bytes"

// MaxHTTPHead bounds how far ParseHTTPHost looks for the Host header: a
// request head longer than this without one is ErrNoHost.
const MaxHTTPHead = 4096

// httpMethods are the request methods ParseHTTPHost recognises (RFC 9110
// section 9 and PATCH); a stream starting otherwise is not HTTP/1.x.
var httpMethods = [...]string{"GET ", "POST ", "HEAD ", "PUT ", "DELETE ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE "}

// ParseHTTPHost returns the Host header of the HTTP/1.x request at the
// start of stream, the first bytes a client sent on a TCP connection. The
// host is written lower-cased, without port and without a trailing dot,
// into dst[:0]; with cap(dst) >= MaxHostLen it does not allocate.
//
// The request line must be "METHOD SP target SP HTTP/1.x CRLF" (a bare LF
// is accepted as line end). Header lines are scanned up to the empty line
// or MaxHTTPHead bytes; the first Host header wins. When the bytes end
// before the Host header or the head's end, the error is ErrIncomplete.
// The host is returned only when well-formed, as for ParseSNI; an IPv6
// literal keeps its brackets ("[::1]").
func ParseHTTPHost(stream, dst []byte) ([]byte, error) {
	if len(stream) > MaxHTTPHead {
		stream = stream[:MaxHTTPHead]
	}
	if err := requestLine(stream); err != nil {
		return nil, err
	}
	line := bytes.IndexByte(stream, '\n')
	p := stream[line+1:]
	for {
		nl := bytes.IndexByte(p, '\n')
		if nl < 0 {
			if len(stream) == MaxHTTPHead {
				return nil, ErrNoHost
			}
			return nil, ErrIncomplete
		}
		h := bytes.TrimSuffix(p[:nl], []byte{'\r'})
		p = p[nl+1:]
		if len(h) == 0 {
			return nil, ErrNoHost
		}
		if len(h) < 5 || h[4] != ':' || !bytes.EqualFold(h[:4], []byte("host")) {
			continue
		}
		return appendHost(dst[:0], hostOnly(bytes.TrimSpace(h[5:])))
	}
}

// requestLine checks the request line at the start of b; ErrIncomplete
// when b ends inside it but is a request so far.
func requestLine(b []byte) error {
	method := false
	for _, m := range httpMethods {
		n := min(len(b), len(m))
		if string(b[:n]) == m[:n] {
			if n < len(m) {
				return ErrIncomplete
			}
			method = true
			break
		}
	}
	if !method {
		return ErrNotHTTP
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		if len(b) == MaxHTTPHead {
			return ErrNotHTTP
		}
		return ErrIncomplete
	}
	l := bytes.TrimSuffix(b[:nl], []byte{'\r'})
	sp := bytes.LastIndexByte(l, ' ')
	if sp < 0 || !bytes.HasPrefix(l[sp+1:], []byte("HTTP/1.")) || len(l[sp+1:]) != len("HTTP/1.1") {
		return ErrNotHTTP
	}
	return nil
}

// hostOnly strips the port of a Host value: "h:80" -> "h",
// "[::1]:80" -> "[::1]".
func hostOnly(v []byte) []byte {
	if len(v) > 0 && v[0] == '[' {
		if i := bytes.IndexByte(v, ']'); i > 0 {
			return v[:i+1]
		}
		return v
	}
	if i := bytes.LastIndexByte(v, ':'); i >= 0 {
		return v[:i]
	}
	return v
}
