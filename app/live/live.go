// Package live is the WebSocket feed /ws (spec 6.1): one tick message per
// second to every connected client, computed once, encoded once per site
// scope among the clients (a site-bound client gets its site's alert
// events only, as REST gives them), and nothing computed while nobody
// listens.
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
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
)

// Sessions re-checks, every tick, that each client's credentials still
// grant the feed, so a socket does not outlive its session (logout,
// expiry, password change, disabled or deleted user, revoked token) — on
// every hub sharing the session store.
type Sessions interface {
	// Key is what identifies the credentials of r (the session or API
	// token), recorded at the upgrade.
	Key(r *http.Request) string
	// Site is the site the identity of r (authorized before the upgrade)
	// is bound to, "" for every site; ok is false when r carries no
	// identity, and the upgrade is then refused: a client of unknown
	// scope gets nothing rather than everything.
	Site(r *http.Request) (site string, ok bool)
	// Valid reports whether the credentials of key still grant the feed,
	// and the site they are bound to now (a user moved to another site
	// gets that site's events from the next tick). An error (the database
	// does not answer) keeps the client and its scope: it says nothing
	// about the session.
	Valid(ctx context.Context, key string) (site string, ok bool, err error)
}

// CloseSessionEnded is the close code of a socket whose session ended
// (4000-4999 are the application's): the console sends the user to sign
// in rather than reconnecting.
const CloseSessionEnded websocket.StatusCode = 4001

// TickSource computes one tick; it is called once per interval while at
// least one client listens.
type TickSource interface {
	Tick(ctx context.Context) (any, error)
}

// Scoped is a tick that differs by site (Tick: its alert events). The
// broker encodes ForSite once per distinct site among its clients, not
// once per client; a tick that is not Scoped is the same for everyone.
type Scoped interface {
	// ForSite is the tick as an identity bound to site sees it; "" is
	// every site's.
	ForSite(site string) any
}

// Broker fans ticks out to the connected clients.
type Broker struct {
	guard    *panics.Guard // a panic in one tick: counted, the next tick runs
	log      *slog.Logger
	cfg      Config
	src      TickSource
	sessions Sessions
	opts     websocket.AcceptOptions
	// origins is Deps.AllowedOrigins normalised (scheme://host:port); nil
	// accepts every origin.
	origins map[string]bool

	mu      sync.Mutex
	clients map[*client]struct{}

	stop chan struct{}
	wg   sync.WaitGroup

	connected prometheus.Gauge
	dropped   prometheus.Counter
	ticks     prometheus.Counter
	ended     prometheus.Counter
	refused   prometheus.Counter
}

type client struct {
	send chan []byte
	conn *websocket.Conn
	once sync.Once
	done chan struct{}
	// key identifies the client's credentials for Sessions.Valid.
	key string
	// site is the scope of the client's identity ("" every site), set at
	// the upgrade and by each recheck; guarded by the broker's mu.
	site string
}

func (c *client) close(code websocket.StatusCode, reason string) {
	c.once.Do(func() {
		close(c.done)
		_ = c.conn.Close(code, reason)
	})
}

// Deps are what the feed is computed from and checked against.
type Deps struct {
	// Source computes the ticks (*Ticker).
	Source TickSource
	// Sessions re-checks the clients' credentials; nil: nothing is
	// re-checked (tests of the plumbing).
	Sessions Sessions
	// AllowedOrigins are the origins (scheme://host[:port], e.g.
	// https://netmon.example from -public-url, https://<tls host>:<port>,
	// http://localhost:<port>) whose pages may open the feed, compared
	// exactly: scheme, host and port (a missing port is the scheme's
	// default). The request's own origin (its scheme and Host) is allowed
	// too. Empty: every origin is accepted (the spec's behaviour when
	// -public-url and -tls-hosts are both empty). They derive from the
	// bound address (Origins), hence not a setting.
	AllowedOrigins []string
	// Registerer takes the feed's metrics (nil: none).
	Registerer prometheus.Registerer
}

// New returns a broker; it does no work until Start.
func New(log *slog.Logger, cfg Config, deps Deps) *Broker {
	src, sessions, reg := deps.Source, deps.Sessions, deps.Registerer
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 4
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = 5 * time.Second
	}
	b := &Broker{log: log, cfg: cfg, src: src, sessions: sessions, clients: map[*client]struct{}{}, guard: panics.New(reg, log, "live")}
	// The origin is checked here, exactly (coder/websocket's patterns match
	// the host only: http:// passed for an https:// public URL).
	b.opts.InsecureSkipVerify = true
	if len(deps.AllowedOrigins) > 0 {
		b.origins = map[string]bool{}
		for _, o := range deps.AllowedOrigins {
			if n, ok := normalOrigin(o); ok {
				b.origins[n] = true
			}
		}
	}
	b.connected = prometheus.NewGauge(prometheus.GaugeOpts{Name: "netmon_ws_clients", Help: "WebSocket clients connected to /ws."})
	b.dropped = prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_ws_slow_clients_dropped_total", Help: "WebSocket clients disconnected because their buffer was full."})
	b.ticks = prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_ws_ticks_total", Help: "Ticks computed and sent (none while no client listens)."})
	b.ended = prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_ws_sessions_ended_total", Help: "WebSocket clients closed because their session or token no longer grants the feed."})
	b.refused = prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_ws_origin_refused_total", Help: "WebSocket upgrades refused for a foreign Origin."})
	if reg != nil {
		for _, c := range []prometheus.Collector{b.connected, b.dropped, b.ticks, b.ended, b.refused} {
			_ = reg.Register(c)
		}
	}
	return b
}

// ChecksOrigin reports whether upgrades are held to an origin allow-list
// (false: pages of any origin may open the feed).
func (b *Broker) ChecksOrigin() bool { return b.origins != nil }

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
			// A panic in one tick is counted and the next tick runs.
			_ = b.guard.Do(b.tick)
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
	b.recheck()
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Interval)
	msg, err := b.src.Tick(ctx)
	cancel()
	if err != nil {
		b.log.Warn("tick failed", "error", err)
		return
	}
	raws, err := b.encode(msg)
	if err != nil {
		b.log.Error("tick not encodable", "error", err)
		return
	}
	b.ticks.Inc()
	b.mu.Lock()
	defer b.mu.Unlock()
	for c := range b.clients {
		raw, ok := raws[c.site]
		if !ok {
			// Connected (or moved to another site) while the tick was
			// encoded: it gets the next one.
			continue
		}
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

// encode renders msg once per distinct site among the clients (once in
// all when msg is not Scoped), keyed by site.
func (b *Broker) encode(msg any) (map[string][]byte, error) {
	b.mu.Lock()
	raws := map[string][]byte{}
	for c := range b.clients {
		raws[c.site] = nil
	}
	b.mu.Unlock()
	scoped, ok := msg.(Scoped)
	if !ok {
		raw, err := json.Marshal(msg)
		if err != nil {
			return nil, err
		}
		for site := range raws {
			raws[site] = raw
		}
		return raws, nil
	}
	for site := range raws {
		raw, err := json.Marshal(scoped.ForSite(site))
		if err != nil {
			return nil, err
		}
		raws[site] = raw
	}
	return raws, nil
}

// recheck closes the clients whose credentials no longer grant the feed,
// and updates the site of those they still grant, asking Sessions once
// per distinct credential.
func (b *Broker) recheck() {
	if b.sessions == nil {
		return
	}
	b.mu.Lock()
	keys := map[string][]*client{}
	for c := range b.clients {
		keys[c.key] = append(keys[c.key], c)
	}
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Interval)
	defer cancel()
	for key, cs := range keys {
		site, ok, err := b.sessions.Valid(ctx, key)
		if err != nil {
			b.log.Warn("live feed: session check failed; clients kept", "error", err)
			continue
		}
		if ok {
			b.mu.Lock()
			for _, c := range cs {
				c.site = site
			}
			b.mu.Unlock()
			continue
		}
		b.mu.Lock()
		for _, c := range cs {
			if _, in := b.clients[c]; in {
				delete(b.clients, c)
				b.connected.Dec()
				b.ended.Inc()
				go c.close(CloseSessionEnded, "session ended: sign in again")
			}
		}
		b.mu.Unlock()
	}
}

// normalOrigin returns scheme://host:port in lower case, the port made
// explicit, or false when o is no http(s) origin.
func normalOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

// originAllowed applies the allow-list: no Origin (a non-browser client),
// the request's own origin, or one of AllowedOrigins.
func (b *Broker) originAllowed(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if b.origins == nil || o == "" {
		return true
	}
	n, ok := normalOrigin(o)
	if !ok {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if self, ok := normalOrigin(scheme + "://" + r.Host); ok && self == n {
		return true
	}
	return b.origins[n]
}

// ServeHTTP upgrades the request (origin permitting) and serves the client
// until it goes away, is dropped, its session ends, or the broker stops.
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !b.originAllowed(r) {
		b.refused.Inc()
		b.log.InfoContext(r.Context(), "websocket refused: foreign origin", "origin", r.Header.Get("Origin"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		msg, _ := json.Marshal(map[string]string{"error": "origin " + r.Header.Get("Origin") + " may not open the live feed (allowed: the hub's own address, -public-url, -tls-hosts, localhost)"})
		_, _ = w.Write(msg)
		return
	}
	var key, site string
	if b.sessions != nil {
		var ok bool
		if site, ok = b.sessions.Site(r); !ok {
			b.log.ErrorContext(r.Context(), "bug: websocket upgrade without an identity")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":"internal error"}`))
			return
		}
		key = b.sessions.Key(r)
	}
	opts := b.opts
	conn, err := websocket.Accept(w, r, &opts)
	if err != nil {
		// Accept has answered (403 for a foreign origin, 400 otherwise).
		b.log.InfoContext(r.Context(), "websocket refused", "origin", r.Header.Get("Origin"), "error", err)
		return
	}
	c := &client{send: make(chan []byte, b.cfg.Buffer), conn: conn, done: make(chan struct{}), key: key, site: site}
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
