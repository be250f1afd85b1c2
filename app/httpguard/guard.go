// Package httpguard keeps the hub's HTTP listener answering under
// connection floods (RELIABILITY case 31): it caps the connections open at
// once, in total and per source address, below the process's open file
// limit, and gives request bodies a deadline.
//
// At a cap, a new connection does not wait and is not simply refused: it
// evicts the connection that has waited longest without delivering a
// complete request (a silent socket, a slow header, a body trickling in,
// an idle keep-alive). A client that sends its request promptly is never
// that connection, so a flood of slow or silent sockets — from one address
// or from many — cannot starve it (Slowloris; Go's http.Server has no body
// deadline of its own). Connections whose request is being served, and
// hijacked ones (WebSockets), are never evicted; when every connection is
// such, the new one is closed at once.
//
// It sits under app/hub (which wraps the listener and hooks the server)
// and app/api (which marks when a request's body has arrived); it imports
// nothing of ours.
package httpguard

import (
	"container/list"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// phase is where a connection is in its request cycle.
type phase uint8

const (
	// waiting: accepted or idle between requests, or reading headers.
	waiting phase = iota
	// receiving: headers read, the body may still be arriving.
	receiving
	// serving: the whole request is with the handler.
	serving
	// hijacked: taken over by a handler (WebSocket).
	hijacked
)

// Guard tracks the listener's connections.
type Guard struct {
	log *slog.Logger
	cfg Config
	// limit is the open file limit the caps were derived from.
	limit uint64

	mu       sync.Mutex
	total    int
	sources  map[netip.Addr]*source
	evictive list.List // *conn that may be evicted, longest waiting first

	m *metrics
}

// source is one remote address's connections.
type source struct {
	n        int
	evictive list.List // *conn, longest waiting first
}

// New raises the open file soft limit to the hard limit, derives the caps
// that cfg leaves at zero from it, and registers the metrics on reg.
func New(log *slog.Logger, cfg Config, reg prometheus.Registerer) *Guard {
	d := DefaultConfig()
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = d.BodyTimeout
	}
	if cfg.LowFileLimit == 0 {
		cfg.LowFileLimit = d.LowFileLimit
	}
	before, after, err := raiseFileLimit()
	if err != nil {
		log.Warn("open file limit unknown; connection caps use the defaults", "error", err)
		after = 4096
	} else if before != after {
		log.Info("open file limit raised", "from", before, "to", after)
	}
	if cfg.Reserve <= 0 {
		cfg.Reserve = max(64, int(min(after, 1<<30)/4))
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = max(16, int(min(after, 1<<30))-cfg.Reserve)
	}
	if cfg.MaxConnsPerSource <= 0 {
		cfg.MaxConnsPerSource = max(16, cfg.MaxConns/4)
	}
	cfg.MaxConnsPerSource = min(cfg.MaxConnsPerSource, cfg.MaxConns)
	if after < cfg.LowFileLimit {
		log.Warn("open file limit is low: HTTP connections are capped to stay below it; raise it (ulimit -n, or LimitNOFILE= in the systemd unit)",
			"limit", after, "max_conns", cfg.MaxConns, "max_conns_per_source", cfg.MaxConnsPerSource, "recommended", cfg.LowFileLimit)
	}
	g := &Guard{log: log, cfg: cfg, limit: after, sources: map[netip.Addr]*source{}}
	g.m = newMetrics(g, reg)
	return g
}

// Config returns the configuration in force, caps derived.
func (g *Guard) Config() Config { return g.cfg }

// FileLimit is the open file limit after raising it.
func (g *Guard) FileLimit() uint64 { return g.limit }

// Listener wraps ln so that every accepted connection is admitted by the
// guard. Wrap the TCP listener, under any TLS listener.
func (g *Guard) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, g: g} }

type listener struct {
	net.Listener
	g *Guard
}

// Accept returns the next admitted connection; refused ones are closed
// here and never reach the server.
func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c := l.g.admit(nc); c != nil {
			return c, nil
		}
	}
}

// admit counts nc in, evicting what the caps require, or closes it.
func (g *Guard) admit(nc net.Conn) *conn {
	src := sourceOf(nc.RemoteAddr())
	now := time.Now()
	var victims []*conn
	g.mu.Lock()
	s := g.sources[src]
	if s == nil {
		s = &source{}
		g.sources[src] = s
	}
	if s.n >= g.cfg.MaxConnsPerSource {
		v := s.oldest()
		if v == nil {
			g.mu.Unlock()
			g.m.closed.WithLabelValues("refused_per_source").Inc()
			_ = nc.Close()
			return nil
		}
		g.releaseLocked(v)
		victims = append(victims, v)
		g.m.closed.WithLabelValues("evicted_per_source").Inc()
	}
	if g.total >= g.cfg.MaxConns {
		e := g.evictive.Front()
		if e == nil {
			if s.n == 0 {
				delete(g.sources, src)
			}
			g.mu.Unlock()
			g.m.closed.WithLabelValues("refused_total").Inc()
			_ = nc.Close()
			closeAll(victims)
			return nil
		}
		v := e.Value.(*conn)
		g.releaseLocked(v)
		victims = append(victims, v)
		g.m.closed.WithLabelValues("evicted_total").Inc()
	}
	c := &conn{Conn: nc, g: g, src: src, s: s, since: now, counted: true}
	g.total++
	s.n++
	c.gElem = g.evictive.PushBack(c)
	c.sElem = s.evictive.PushBack(c)
	g.mu.Unlock()
	closeAll(victims)
	return c
}

func closeAll(cs []*conn) {
	for _, c := range cs {
		c.reported.Store(true)
		_ = c.Conn.Close()
	}
}

func (s *source) oldest() *conn {
	if e := s.evictive.Front(); e != nil {
		return e.Value.(*conn)
	}
	return nil
}

// releaseLocked takes c out of the counts and lists (once).
func (g *Guard) releaseLocked(c *conn) {
	if !c.counted {
		return
	}
	c.counted = false
	g.unlistLocked(c)
	g.total--
	c.s.n--
	if c.s.n == 0 {
		delete(g.sources, c.src)
	}
}

// unlistLocked makes c no longer evictable.
func (g *Guard) unlistLocked(c *conn) {
	if c.gElem != nil {
		g.evictive.Remove(c.gElem)
		c.s.evictive.Remove(c.sElem)
		c.gElem, c.sElem = nil, nil
	}
}

// setPhase moves c to p; waiting and receiving connections go to the back
// of the eviction lists (they have waited least).
func (g *Guard) setPhase(c *conn, p phase) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !c.counted {
		return
	}
	c.phase = p
	c.since = time.Now()
	g.unlistLocked(c)
	if p == waiting || p == receiving {
		c.gElem = g.evictive.PushBack(c)
		c.sElem = c.s.evictive.PushBack(c)
	}
}

// ConnState is the http.Server's ConnState hook.
func (g *Guard) ConnState(nc net.Conn, st http.ConnState) {
	c := unwrap(nc)
	if c == nil {
		return
	}
	switch st {
	case http.StateActive:
		c.requests++
		g.setPhase(c, receiving)
	case http.StateIdle:
		g.setPhase(c, waiting)
	case http.StateHijacked:
		g.setPhase(c, hijacked)
	case http.StateClosed:
		_ = c.Close()
	}
}

type ctxKey struct{}

// ConnContext is the http.Server's ConnContext hook: it lets Delivered
// and Body find the request's connection.
func (g *Guard) ConnContext(ctx context.Context, nc net.Conn) context.Context {
	if c := unwrap(nc); c != nil {
		return context.WithValue(ctx, ctxKey{}, c)
	}
	return ctx
}

// unwrap finds our conn under a *tls.Conn (or returns it as is).
func unwrap(nc net.Conn) *conn {
	for {
		switch v := nc.(type) {
		case *conn:
			return v
		case interface{ NetConn() net.Conn }:
			nc = v.NetConn()
		default:
			return nil
		}
	}
}

func sourceOf(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}
