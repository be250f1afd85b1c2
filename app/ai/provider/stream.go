package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// errResponseTooLarge ends a body read past Options.MaxResponseBytes.
var errResponseTooLarge = errors.New("response over the size cap")

// parser turns the frames of one format into text and the end.
type parser interface {
	// feed handles one frame: the text it carries (before reasoning
	// markup is stripped), whether the answer is complete, or an error
	// (Kind and Op are filled in by the stream).
	feed(f frame) (text string, done bool, err *Error)
	// eofDone reports whether a clean end of the body now counts as a
	// complete answer (compat servers that omit [DONE]).
	eofDone() bool
	// usage returns the token counts seen so far.
	usage() (in, out int)
}

// watchdog cancels the call when a phase's deadline passes, and
// remembers which phase it was, so the error says "timeout" and why.
type watchdog struct {
	mu      sync.Mutex
	t       *time.Timer
	phase   string
	fired   string
	stopped bool
	cancel  context.CancelFunc
}

func newWatchdog(cancel context.CancelFunc) *watchdog { return &watchdog{cancel: cancel} }

func (w *watchdog) arm(phase string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || w.fired != "" {
		return
	}
	w.phase = phase
	if w.t == nil {
		w.t = time.AfterFunc(d, w.fire)
		return
	}
	w.t.Reset(d)
}

func (w *watchdog) fire() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.fired = w.phase
	w.mu.Unlock()
	w.cancel()
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.t != nil {
		w.t.Stop()
	}
}

func (w *watchdog) firedPhase() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// meteredBody re-arms the idle deadline on every read that brings data
// and enforces the total size cap.
type meteredBody struct {
	r     io.Reader
	wd    *watchdog
	idle  time.Duration
	phase string // the timeout's description, built once
	total int64
	max   int64
}

func (m *meteredBody) Read(p []byte) (int, error) {
	// Read at most one byte past the cap, so that no byte beyond it is
	// ever handed on (the line reader buffers ahead of the parser).
	if m.total > m.max {
		return 0, errResponseTooLarge
	}
	if rem := m.max - m.total + 1; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := m.r.Read(p)
	if n > 0 {
		m.wd.arm(m.phase, m.idle)
		m.total += int64(n)
		if m.total > m.max {
			return n - 1, errResponseTooLarge
		}
	}
	return n, err
}

// Chat sends req and returns its stream.
func (c *client) Chat(ctx context.Context, req Request) (Stream, error) {
	if req.Model == "" {
		return nil, &Error{Kind: c.kind, Op: "chat", Class: BadRequest, Detail: "no model given"}
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	wd := newWatchdog(cancel)
	fail := func(err error) (Stream, error) {
		wd.stop()
		cancel()
		return nil, err
	}
	wd.arm(fmt.Sprintf("no first byte within %s", c.opts.FirstByteTimeout), c.opts.FirstByteTimeout)
	var (
		path string
		body any
	)
	switch c.kind {
	case CloudA, Compat:
		path, body = "/v1/chat/completions", openAIBody(c.kind, req)
	case CloudB:
		path, body = "/v1/messages", anthropicBody(req)
	case LocalA:
		path, body = "/api/chat", ollamaBody(req)
	case LocalB:
		prompt, err := c.llamaTemplate(ctx, req, wd)
		if err != nil {
			return fail(err)
		}
		// The template call answered: the completion gets its own first-byte wait.
		wd.arm(fmt.Sprintf("no first byte within %s", c.opts.FirstByteTimeout), c.opts.FirstByteTimeout)
		path, body = "/completion", llamaBody(req, prompt)
	}
	resp, err := c.do(ctx, "chat", http.MethodPost, path, body, wd, ctx)
	if err != nil {
		return fail(err)
	}
	mb := &meteredBody{r: resp.Body, wd: wd, idle: c.opts.IdleTimeout, max: c.opts.MaxResponseBytes,
		phase: fmt.Sprintf("no data for %s between chunks", c.opts.IdleTimeout)}
	s := &stream{c: c, ctx: ctx, cancel: cancel, wd: wd, body: resp.Body, p: newParser(c.kind), frames: newFramer(c.kind, mb, c.opts.MaxLineBytes), frames0: true}
	return s, nil
}

// newParser returns the parser of kind's stream format.
func newParser(kind Kind) parser {
	switch kind {
	case CloudB:
		return &anthropicParser{}
	case LocalA:
		return &ollamaParser{}
	case LocalB:
		return &llamaParser{}
	}
	return &openAIParser{compat: kind == Compat}
}

// newFramer returns the framing of kind's stream: NDJSON for Ollama,
// server-sent events for the others.
func newFramer(kind Kind, r io.Reader, maxLine int) framer {
	if kind == LocalA {
		return &ndjsonReader{lines: newLineReader(r, maxLine)}
	}
	return newSSEReader(r, maxLine)
}

type stream struct {
	c      *client
	ctx    context.Context
	cancel context.CancelFunc
	wd     *watchdog
	body   io.ReadCloser
	frames framer
	p      parser
	strip  ThinkStripper

	frames0  bool // no frame received yet
	queue    []Event
	ended    bool // the Done event is queued
	eof      bool // the Done event was returned
	err      error
	closeOne sync.Once
}

// Next returns the next event; see Stream.
func (s *stream) Next() (Event, error) {
	for {
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue = s.queue[1:]
			if ev.Done {
				s.eof = true
			}
			return ev, nil
		}
		if s.err != nil {
			return Event{}, s.err
		}
		if s.eof {
			return Event{}, io.EOF
		}
		f, err := s.frames.next()
		if err != nil {
			if errors.Is(err, io.EOF) && s.p.eofDone() {
				s.finish()
				continue
			}
			s.fail(s.readError(err))
			continue
		}
		s.frames0 = false
		text, done, perr := s.p.feed(f)
		if perr != nil {
			perr.Kind, perr.Op = s.c.kind, "chat"
			s.fail(perr)
			continue
		}
		if text != "" {
			if out := s.strip.Write(text); out != "" {
				s.queue = append(s.queue, Event{Delta: out})
			}
		}
		if done {
			s.finish()
		}
	}
}

func (s *stream) finish() {
	if tail := s.strip.Flush(); tail != "" {
		s.queue = append(s.queue, Event{Delta: tail})
	}
	in, out := s.p.usage()
	s.queue = append(s.queue, Event{Done: true, TokensIn: in, TokensOut: out})
	s.ended = true
	_ = s.Close()
}

func (s *stream) fail(err error) {
	s.err = err
	_ = s.Close()
}

// readError classifies a failed body read. The watchdog and the
// context are asked first: a cancelled read surfaces as an ordinary
// read error.
func (s *stream) readError(err error) *Error {
	e := &Error{Kind: s.c.kind, Op: "chat", cause: err}
	switch {
	case errors.Is(err, errLineTooLong):
		e.Class, e.Detail = TooLarge, fmt.Sprintf("a line or event over %d bytes", s.c.opts.MaxLineBytes)
	case errors.Is(err, errResponseTooLarge):
		e.Class, e.Detail = TooLarge, fmt.Sprintf("response over %d bytes", s.c.opts.MaxResponseBytes)
	case s.wd.firedPhase() != "":
		e.Class, e.Detail = Timeout, s.wd.firedPhase()
	case errors.Is(s.ctx.Err(), context.DeadlineExceeded):
		e.Class, e.Detail = Timeout, "call deadline passed"
	case s.ctx.Err() != nil:
		e.Class = Canceled
	case errors.Is(err, io.EOF) && s.frames0:
		// Not one frame of the format in a 200 body: a proxy's page or
		// another kind's format, not a dropped stream.
		e.Class, e.Detail, e.cause = BadResponse, "no "+string(s.c.kind)+" stream in the response", nil
	case errors.Is(err, io.EOF):
		// The cause is not io.EOF: a caller testing errors.Is(err, io.EOF)
		// for the normal end must not take a cut for it.
		e.Class, e.Detail, e.cause = Cut, "connection closed before the end of the answer", io.ErrUnexpectedEOF
	default:
		e.Class, e.Detail = Cut, "connection failed mid-stream"
	}
	return e
}

// Close ends the call: the context is cancelled and the body closed,
// so the connection is torn down at once.
func (s *stream) Close() error {
	s.closeOne.Do(func() {
		s.wd.stop()
		s.cancel()
		_ = s.body.Close()
	})
	return nil
}
