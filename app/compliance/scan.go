package compliance

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// scanner reads a bundle without encoding/json's reflection on the hot
// path: the records of "logs" are flat objects parsed by hand (about
// three times faster, which is what puts ten million records under half
// a minute); every other value is captured raw and handed to
// encoding/json. It accepts any JSON layout (pretty-printed or not).
type scanner struct {
	r   *bufio.Reader
	buf []byte
	err error
}

func newScanner(r io.Reader) *scanner {
	return &scanner{r: bufio.NewReaderSize(r, 1<<20)}
}

var errSyntax = errors.New("bundle: malformed JSON")

func (s *scanner) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// next returns the next byte that is not white space.
func (s *scanner) next() byte {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			s.fail(fmt.Errorf("bundle: %w", io.ErrUnexpectedEOF))
			return 0
		}
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return c
		}
	}
}

func (s *scanner) expect(c byte) {
	if got := s.next(); got != c && s.err == nil {
		s.fail(fmt.Errorf("%w: want %q, got %q", errSyntax, c, got))
	}
}

// str reads a string whose opening quote was consumed. Without escapes
// the bytes are taken as they are; with them encoding/json unquotes.
func (s *scanner) str() string {
	s.buf = s.buf[:0]
	escaped := false
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			s.fail(fmt.Errorf("bundle: %w", io.ErrUnexpectedEOF))
			return ""
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			escaped = true
			s.buf = append(s.buf, c)
			c, err = s.r.ReadByte()
			if err != nil {
				s.fail(fmt.Errorf("bundle: %w", io.ErrUnexpectedEOF))
				return ""
			}
		}
		s.buf = append(s.buf, c)
	}
	if !escaped {
		return string(s.buf)
	}
	var out string
	q := make([]byte, 0, len(s.buf)+2)
	q = append(append(append(q, '"'), s.buf...), '"')
	if err := json.Unmarshal(q, &out); err != nil {
		s.fail(fmt.Errorf("%w: %v", errSyntax, err))
	}
	return out
}

// quoted reads a string value (with its opening quote).
func (s *scanner) quoted() string {
	s.expect('"')
	return s.str()
}

// number reads an integer.
func (s *scanner) number() int64 {
	s.buf = s.buf[:0]
	c := s.next()
	for (c >= '0' && c <= '9') || c == '-' {
		s.buf = append(s.buf, c)
		b, err := s.r.ReadByte()
		if err != nil {
			break
		}
		c = b
	}
	_ = s.r.UnreadByte()
	n, err := strconv.ParseInt(string(s.buf), 10, 64)
	if err != nil {
		s.fail(fmt.Errorf("%w: number %q", errSyntax, s.buf))
	}
	return n
}

// raw captures one whole value (any type) as bytes.
func (s *scanner) raw() []byte {
	out := []byte{}
	c := s.next()
	depth := 0
	for s.err == nil {
		out = append(out, c)
		switch c {
		case '"':
			for {
				b, err := s.r.ReadByte()
				if err != nil {
					s.fail(fmt.Errorf("bundle: %w", io.ErrUnexpectedEOF))
					return out
				}
				out = append(out, b)
				if b == '\\' {
					b, _ = s.r.ReadByte()
					out = append(out, b)
					continue
				}
				if b == '"' {
					break
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		if depth == 0 {
			p, err := s.r.Peek(1)
			if c == '"' || c == '}' || c == ']' || err != nil || isDelim(p[0]) {
				return out
			}
		}
		b, err := s.r.ReadByte()
		if err != nil {
			return out
		}
		c = b
	}
	return out
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t'
}

// more reports whether a container continues after an element (consuming
// the comma) or ends (consuming the closing byte).
func (s *scanner) more(end byte) bool {
	switch c := s.next(); c {
	case ',':
		return true
	case end:
		return false
	default:
		s.fail(fmt.Errorf("%w: want ',' or %q, got %q", errSyntax, end, c))
		return false
	}
}

// empty consumes the closing byte of an empty container if it is next.
func (s *scanner) empty(end byte) bool {
	for {
		p, err := s.r.Peek(1)
		if err != nil {
			return false
		}
		switch p[0] {
		case ' ', '\n', '\r', '\t':
			_, _ = s.r.ReadByte()
			continue
		case end:
			_, _ = s.r.ReadByte()
			return true
		}
		return false
	}
}

// log reads one record object into l (reusing its slices).
func (s *scanner) log(l *BundleLog) {
	l.F, l.Salt, l.H, l.Masked = l.F[:0], "", "", nil
	s.expect('{')
	if s.empty('}') {
		return
	}
	for s.err == nil {
		key := s.quoted()
		s.expect(':')
		switch key {
		case "seq":
			l.Seq = uint64(s.number())
		case "at":
			l.At = s.number()
		case "ts":
			l.TS = s.number()
		case "kind":
			l.Kind = s.quoted()
		case "salt":
			l.Salt = s.quoted()
		case "h":
			l.H = s.quoted()
		case "f":
			s.expect('[')
			if !s.empty(']') {
				for s.err == nil {
					l.F = append(l.F, s.quoted())
					if !s.more(']') {
						break
					}
				}
			}
		case "masked":
			if err := json.Unmarshal(s.raw(), &l.Masked); err != nil {
				s.fail(fmt.Errorf("%w: masked: %v", errSyntax, err))
			}
		default:
			s.raw()
		}
		if !s.more('}') {
			return
		}
	}
}
