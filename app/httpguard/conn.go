package httpguard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"container/list"
	"net"
	"net/netip"
)

// conn is an admitted connection. Its fields other than reported are
// guarded by Guard.mu.
type conn struct {
	net.Conn
	g   *Guard
	src netip.Addr
	s   *source

	phase    phase
	since    time.Time
	requests int
	counted  bool // in Guard's counts; false once released
	gElem    *list.Element
	sElem    *list.Element

	// reported: its early end is counted already (evicted, or its body
	// timed out), so Close does not count it again.
	reported  atomic.Bool
	closeOnce sync.Once
}

// Close releases the connection's place and counts a connection that
// ended before delivering a request (a silent or slow client the server's
// deadlines closed).
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		c.g.mu.Lock()
		incomplete := c.counted && (c.phase == receiving || (c.phase == waiting && c.requests == 0))
		c.g.releaseLocked(c)
		c.g.mu.Unlock()
		if incomplete && !c.reported.Load() {
			c.g.m.closed.WithLabelValues("incomplete_request").Inc()
		}
	})
	return err
}

// Delivered records that the request of ctx has reached its handler
// whole: its connection can no longer be evicted until it is idle again.
func Delivered(ctx context.Context) {
	if c, ok := ctx.Value(ctxKey{}).(*conn); ok {
		c.g.setPhase(c, serving)
	}
}

// Body gives r's body a deadline of timeout from now (the guard's
// BodyTimeout when timeout is 0) and marks the request delivered when the
// body has been read to its end, or at once when there is none. A body
// read that hits the deadline fails with an error matching
// os.ErrDeadlineExceeded, and is counted.
//
// Once the body is in, the deadline is lifted: net/http keeps a read
// pending on the connection while the handler runs (to notice a client
// that goes away), and a deadline left in place could cancel a slow
// handler's context for no fault of the client.
func (g *Guard) Body(r *http.Request, timeout time.Duration) {
	c, _ := r.Context().Value(ctxKey{}).(*conn)
	if c == nil {
		return
	}
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		g.setPhase(c, serving)
		return
	}
	if timeout <= 0 {
		timeout = g.cfg.BodyTimeout
	}
	_ = c.Conn.SetReadDeadline(time.Now().Add(timeout))
	r.Body = &body{ReadCloser: r.Body, c: c}
}

// body watches a request body for its end and for its deadline.
type body struct {
	io.ReadCloser
	c    *conn
	done bool
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		if errors.Is(err, io.EOF) {
			_ = b.c.Conn.SetReadDeadline(time.Time{})
			b.c.g.setPhase(b.c, serving)
		} else if errors.Is(err, os.ErrDeadlineExceeded) && !b.c.reported.Swap(true) {
			b.c.g.m.closed.WithLabelValues("body_timeout").Inc()
		}
	}
	return n, err
}
