package provider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// frame is one unit of a stream: an SSE event (its "event:" name and
// its joined "data:" lines) or one NDJSON line (data only).
type frame struct {
	event string
	data  []byte
}

// errLineTooLong is returned by a lineReader for a line over its cap.
var errLineTooLong = errors.New("line over the size cap")

// lineReader reads lines of at most max bytes, without the end of line
// ("\n" or "\r\n"). A last line without a newline is returned, then
// io.EOF.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 32<<10), max: max}
}

func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		part, err := l.r.ReadSlice('\n')
		if len(l.buf)+len(part) > l.max+2 { // +2: the line end itself
			return nil, errLineTooLong
		}
		l.buf = append(l.buf, part...)
		switch {
		case err == nil:
			return trimEOL(l.buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(l.buf) > 0:
			return trimEOL(l.buf), nil
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// framer yields the frames of a body.
type framer interface {
	next() (frame, error)
}

// sseReader reads text/event-stream (the WHATWG "server-sent events"
// format): "event:" and "data:" fields, events ended by a blank line,
// ":" comments ignored. For tolerance of OpenAI-compatible servers that
// omit the blank line between events, a "data:" line that follows a
// data field already holding a complete JSON value starts a new event.
type sseReader struct {
	lines   *lineReader
	event   string
	data    []byte
	hasData bool
	max     int
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{lines: newLineReader(r, max), max: max}
}

func (s *sseReader) next() (frame, error) {
	for {
		line, err := s.lines.next()
		if err != nil {
			if errors.Is(err, io.EOF) && s.hasData {
				return s.dispatch(), nil
			}
			return frame{}, err
		}
		if len(line) == 0 {
			if s.hasData {
				return s.dispatch(), nil
			}
			s.event = ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			if s.hasData {
				// A new event name before the blank line: the previous
				// event is over (tolerance, as for data below).
				f := s.dispatch()
				s.event = string(value)
				return f, nil
			}
			s.event = string(value)
		case "data":
			if s.hasData && json.Valid(s.data) {
				f := s.dispatch()
				s.data = append(s.data[:0], value...)
				s.hasData = true
				return f, nil
			}
			if s.hasData {
				s.data = append(s.data, '\n')
			}
			if len(s.data)+len(value) > s.max {
				return frame{}, errLineTooLong
			}
			s.data = append(s.data, value...)
			s.hasData = true
		}
		// "id", "retry" and unknown fields are ignored, as the format says.
	}
}

func (s *sseReader) dispatch() frame {
	f := frame{event: s.event, data: append([]byte(nil), s.data...)}
	s.event, s.data, s.hasData = "", s.data[:0], false
	return f
}

// ndjsonReader reads one JSON value per line (Ollama's
// application/x-ndjson); blank lines are skipped.
type ndjsonReader struct{ lines *lineReader }

func (n *ndjsonReader) next() (frame, error) {
	for {
		line, err := n.lines.next()
		if err != nil {
			return frame{}, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return frame{data: append([]byte(nil), line...)}, nil
	}
}
