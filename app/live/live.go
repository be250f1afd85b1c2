// Package live is the WebSocket feed /ws (spec 6.1): one tick message per
// second to every connected client, computed once and shared, and nothing
// computed while nobody listens.
//
// Each client has a small bounded buffer; a client that cannot keep up is
// disconnected rather than allowed to delay the others (RELIABILITY 24).
// Authentication happens before the upgrade, in app/api's middleware, like
// any S route; the origin allow-list is checked at the upgrade.
package live

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
)

// Config configures the feed.
type Config struct {
	// Interval between ticks (1 s).
	Interval time.Duration
	// Buffer is how many ticks a client may have queued before it is
	// dropped as too slow.
	Buffer int
	// WriteTimeout bounds one write to a client.
	WriteTimeout time.Duration
	// AllowedOrigins are the extra origins (URLs such as
	// https://netmon.example, from -public-url and -tls-hosts) whose pages
	// may open the feed; the request's own host, localhost, 127.0.0.1 and
	// [::1] are always allowed. Empty: every origin is accepted (the spec's
	// behaviour when -public-url and -tls-hosts are both empty).
	AllowedOrigins []string
}

// DefaultConfig returns one tick a second, four queued ticks per client.
func DefaultConfig() Config {
	return Config{Interval: time.Second, Buffer: 4, WriteTimeout: 5 * time.Second}
}

// TickSource computes one tick; it is called once per interval while at
// least one client listens.
type TickSource interface {
	Tick(ctx context.Context) (any, error)
}

// Broker fans ticks out to the connected clients.
type Broker struct {
	log  *slog.Logger
	cfg  Config
	src  TickSource
	opts websocket.AcceptOptions

	mu      sync.Mutex
	clients map[*client]struct{}

	stop chan struct{}
	wg   sync.WaitGroup

	connected prometheus.Gauge
	dropped   prometheus.Counter
	ticks     prometheus.Counter
}

type client struct {
	send chan []byte
	conn *websocket.Conn
	once sync.Once
	done chan struct{}
}

func (c *client) close(code websocket.StatusCode, reason string) {
	c.once.Do(func() {
		close(c.done)
		_ = c.conn.Close(code, reason)
	})
}

// New returns a broker; it does no work until Start.
func New(log *slog.Logger, cfg Config, src TickSource, reg prometheus.Registerer) *Broker {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 4
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 5 * time.Second
	}
	b := &Broker{log: log, cfg: cfg, src: src, clients: map[*client]struct{}{}}
	if len(cfg.AllowedOrigins) == 0 {
		b.opts.InsecureSkipVerify = true
	} else {
		b.opts.OriginPatterns = []string{"localhost", "localhost:*", "127.0.0.1", "127.0.0.1:*", `\[::1\]`, `\[::1\]:*`} // path.Match patterns: brackets escaped
		for _, o := range cfg.AllowedOrigins {
			if u, err := url.Parse(o); err == nil && u.Host != "" {
				b.opts.OriginPatterns = append(b.opts.OriginPatterns, escapeMatch(u.Host))
			}
		}
	}
	b.connected = prometheus.NewGauge(prometheus.GaugeOpts{Name: "netmon_ws_clients", Help: "WebSocket clients connected to /ws."})
	b.dropped = prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_ws_slow_clients_dropped_total", Help: "WebSocket clients disconnected because their buffer was full."})
	b.ticks = prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_ws_ticks_total", Help: "Ticks computed and sent (none while no client listens)."})
	if reg != nil {
		for _, c := range []prometheus.Collector{b.connected, b.dropped, b.ticks} {
			_ = reg.Register(c)
		}
	}
	return b
}

// Start begins ticking.
func (b *Broker) Start() error {
	b.stop = make(chan struct{})
	b.wg.Add(1)
	go b.loop()
	return nil
}

// Stop ends ticking and disconnects every client.
func (b *Broker) Stop() error {
	if b.stop == nil {
		return nil
	}
	close(b.stop)
	b.wg.Wait()
	b.stop = nil
	b.mu.Lock()
	for c := range b.clients {
		c.close(websocket.StatusGoingAway, "hub shutting down")
	}
	b.mu.Unlock()
	return nil
}

// Clients is the number of connected clients.
func (b *Broker) Clients() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.clients)
}

func (b *Broker) loop() {
	defer b.wg.Done()
	t := time.NewTicker(b.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.tick()
		}
	}
}

// tick computes one message — only when someone listens — and offers it
// to every client without ever waiting on one.
func (b *Broker) tick() {
	b.mu.Lock()
	n := len(b.clients)
	b.mu.Unlock()
	if n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Interval)
	msg, err := b.src.Tick(ctx)
	cancel()
	if err != nil {
		b.log.Warn("tick failed", "error", err)
		return
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		b.log.Error("tick not encodable", "error", err)
		return
	}
	b.ticks.Inc()
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.clients {
		select {
		case c.send <- raw:
		default:
			delete(b.clients, c)
			b.connected.Dec()
			b.dropped.Inc()
			go c.close(websocket.StatusPolicyViolation, "too slow: ticks are not being read")
		}
	}
}

// ServeHTTP upgrades the request (origin permitting) and serves the client
// until it goes away, is dropped, or the broker stops.
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	opts := b.opts
	conn, err := websocket.Accept(w, r, &opts)
	if err != nil {
		// Accept has answered (403 for a foreign origin, 400 otherwise).
		b.log.InfoContext(r.Context(), "websocket refused", "origin", r.Header.Get("Origin"), "error", err)
		return
	}
	c := &client{send: make(chan []byte, b.cfg.Buffer), conn: conn, done: make(chan struct{})}
	b.mu.Lock()
	b.clients[c] = struct{}{}
	b.mu.Unlock()
	b.connected.Inc()
	defer func() {
		b.mu.Lock()
		if _, ok := b.clients[c]; ok {
			delete(b.clients, c)
			b.connected.Dec()
		}
		b.mu.Unlock()
		c.close(websocket.StatusNormalClosure, "")
	}()
	// Client-to-server messages are not part of the protocol: read only to
	// notice the close.
	ctx := conn.CloseRead(context.Background())
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			return
		case raw := <-c.send:
			wctx, cancel := context.WithTimeout(ctx, b.cfg.WriteTimeout)
			err := conn.Write(wctx, websocket.MessageText, raw)
			cancel()
			if err != nil {
				return
			}
		}
	}
}

// escapeMatch quotes path.Match's special characters in a host
// ("[2001:db8::1]:8443" would otherwise be a character class).
func escapeMatch(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
