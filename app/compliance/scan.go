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
// a minute); the few other values it needs are captured raw and handed
// to encoding/json, and the rest is skipped without being kept. It
// accepts any JSON layout (pretty-printed or not).
//
// A bundle is hostile input: every value it keeps is capped (maxToken,
// maxFields), and every piece of input quoted in an error is clipped, so
// memory stays flat whatever the file (issue 28: a 255 KB zip once made
// the verifier hold 2 GB and print a 268 MB error line).
type scanner struct {
	r   *bufio.Reader
	buf []byte
	err error
}

func newScanner(r io.Reader) *scanner {
	return &scanner{r: bufio.NewReaderSize(r, 1<<20)}
}

var errSyntax = errors.New("bundle: malformed JSON")

// Caps on what the scanner keeps of one value. A genuine string is at
// most a syslog message (a 64 KiB datagram, about six times longer
// JSON-escaped); a checkpoint with its timestamp token is a few KiB.
const (
	maxToken  = 1 << 20 // bytes of one kept string, number or raw value
	maxFields = 16      // values in a record's "f" (a kind has at most 8)
	maxEcho   = 200     // bytes of input quoted in an error message
)

// errTooLong is the error of a value past maxToken.
var errTooLong = fmt.Errorf("%w: a value longer than %d bytes (not evidence)", errSyntax, maxToken)

// clip shortens input quoted in an error to maxEcho bytes.
func clip[T string | []byte](v T) string {
	if len(v) <= maxEcho {
		return string(v)
	}
	return fmt.Sprintf("%s… (%d bytes)", v[:maxEcho], len(v))
}

func (s *scanner) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// eof records a read error inside a value: the end of the input, or the
// reader's own error (a cap on the decompressed size, a corrupt archive).
func (s *scanner) eof(err error) {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	s.fail(fmt.Errorf("bundle: %w", err))
}

// next returns the next byte that is not white space.
func (s *scanner) next() byte {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			s.eof(err)
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
			s.eof(err)
			return ""
		}
		if c == '"' {
			break
		}
		if len(s.buf) >= maxToken {
			s.fail(errTooLong)
			return ""
		}
		if c == '\\' {
			escaped = true
			s.buf = append(s.buf, c)
			c, err = s.r.ReadByte()
			if err != nil {
				s.eof(err)
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
		if len(s.buf) > 20 { // longer than any int64: refuse, keep nothing more
			s.fail(fmt.Errorf("%w: number %s", errSyntax, clip(s.buf)))
			return 0
		}
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
		s.fail(fmt.Errorf("%w: number %q", errSyntax, clip(s.buf)))
	}
	return n
}

// raw captures one whole value (any type) as bytes, up to maxToken.
func (s *scanner) raw() []byte { return s.value(true) }

// skip reads past one whole value without keeping it.
func (s *scanner) skip() { s.value(false) }

// value reads one whole value, keeping its bytes when keep is set.
func (s *scanner) value(keep bool) []byte {
	out := []byte{}
	add := func(b byte) {
		if !keep {
			return
		}
		if len(out) >= maxToken {
			s.fail(errTooLong)
			return
		}
		out = append(out, b)
	}
	c := s.next()
	depth := 0
	for s.err == nil {
		add(c)
		switch c {
		case '"':
			for s.err == nil {
				b, err := s.r.ReadByte()
				if err != nil {
					s.eof(err)
					return out
				}
				add(b)
				if b == '\\' {
					b, _ = s.r.ReadByte()
					add(b)
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
		if depth <= 0 {
			p, err := s.r.Peek(1)
			if c == '"' || c == '}' || c == ']' || err != nil || isDelim(p[0]) {
				if depth < 0 {
					s.fail(fmt.Errorf("%w: unbalanced %q", errSyntax, c))
				}
				return out
			}
		}
		b, err := s.r.ReadByte()
		if err != nil {
			s.eof(err)
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

// end checks that nothing but white space follows the bundle's object:
// a second document after it is what another reader (jq) would show.
func (s *scanner) end() {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.eof(err)
			}
			return
		}
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			s.fail(fmt.Errorf("%w: data after the bundle's closing brace", errSyntax))
			return
		}
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

// logKeyBit numbers the keys of a record, so that a key given twice is
// refused (a reader keeping the first and one keeping the last would
// disagree). A switch, not a map: it runs for every key of every record.
func logKeyBit(key string) uint {
	switch key {
	case "seq":
		return 1
	case "at":
		return 2
	case "ts":
		return 4
	case "kind":
		return 8
	case "salt":
		return 16
	case "h":
		return 32
	case "f":
		return 64
	case "masked":
		return 128
	}
	return 0
}

// log reads one record object into l (reusing its slices).
func (s *scanner) log(l *BundleLog) {
	l.Seq, l.At, l.TS, l.Kind = 0, 0, 0, ""
	l.F, l.Salt, l.H, l.Masked = l.F[:0], "", "", nil
	s.expect('{')
	if s.empty('}') {
		return
	}
	var seen uint
	for s.err == nil {
		key := s.quoted()
		s.expect(':')
		if bit := logKeyBit(key); bit != 0 {
			if seen&bit != 0 {
				s.fail(fmt.Errorf("%w: key %q twice in a record", errSyntax, key))
				return
			}
			seen |= bit
		}
		switch key {
		case "seq":
			n := s.number()
			if n < 0 {
				s.fail(fmt.Errorf("%w: seq %d", errSyntax, n))
			}
			l.Seq = uint64(n)
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
					if len(l.F) >= maxFields {
						s.fail(fmt.Errorf("%w: more than %d values in a record", errSyntax, maxFields))
						return
					}
					l.F = append(l.F, s.quoted())
					if !s.more(']') {
						break
					}
				}
			}
		case "masked":
			if raw := s.raw(); s.err == nil {
				if err := json.Unmarshal(raw, &l.Masked); err != nil {
					s.fail(fmt.Errorf("%w: masked: %v", errSyntax, err))
				}
			}
		default:
			s.skip()
		}
		if !s.more('}') {
			return
		}
	}
}
