// Package hub is the composition root of the hub process: New builds every
// component from the configuration in dependency order, Start starts them
// in that order and Stop stops them in reverse. It is the only package that
// imports all the others (with app/api); nothing imports it but app/cli.
package hub

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"netmon/app/api"
	"netmon/app/auth"
	"netmon/app/auth/oidc"
	"netmon/app/config"
	"netmon/app/fleet"
	"netmon/app/fleet/pki"
	"netmon/app/httpguard"
	"netmon/app/live"
	"netmon/app/version"
	"netmon/capture"
	"netmon/capture/proc"
	"netmon/collectors/flows"
	"netmon/collectors/geo"
	"netmon/collectors/syslog"
	"netmon/store"
	"netmon/store/queue"
	"netmon/store/vault"
	"netmon/ui"
)

// DrainTimeout bounds how long Stop waits for in-flight requests.
const DrainTimeout = 10 * time.Second

// ReadHeaderTimeout is how long a connection may take to send a request's
// headers (a silent connection is closed after it).
const ReadHeaderTimeout = 5 * time.Second

// Hub is a running (or ready to run) hub process.
type Hub struct {
	log *slog.Logger
	cfg config.Hub

	reg       *prometheus.Registry
	db        *store.DB
	retention *store.Retention
	vault     *vault.Vault
	auth      *auth.Service
	geo       *geo.Geo
	capture   *capture.Capture
	conns     *proc.Lister
	live      *live.Broker
	queue     *queue.Channel
	flows     *flows.Collector
	syslog    *syslog.Receiver
	fleet     *fleet.Service
	pki       *pki.Authority
	api       *api.Server
	guard     *httpguard.Guard
	srv       *http.Server
	ln        net.Listener

	// wrap, when set (tests only), wraps the API handler.
	wrap func(http.Handler) http.Handler
	// outbound is the HTTP client for calls the hub makes (the OpenID
	// provider); tests point it at their own TLS servers.
	outbound *http.Client

	serveErr chan error
	stopOnce sync.Once
	stopErr  error
}

// New returns a hub for cfg. It does no work: Start opens and listens.
// A Port of 0 picks a free port (tests); Addr tells which.
func New(log *slog.Logger, cfg config.Hub) *Hub {
	return &Hub{log: log, cfg: cfg, serveErr: make(chan error, 1)}
}

// Start opens the store (applying migrations), starts the maintenance loop
// and begins serving HTTP. On error everything already started is stopped.
func (h *Hub) Start(ctx context.Context) (err error) {
	begin := time.Now()
	defer func() {
		if err != nil {
			_ = h.Stop(context.Background())
		}
	}()
	h.reg = prometheus.NewRegistry()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "netmon_build_info",
		Help:        "Always 1; the labels say which build is running.",
		ConstLabels: prometheus.Labels{"version": version.Version, "commit": version.Commit, "protocol_version": strconv.Itoa(version.ProtocolVersion)},
	})
	buildInfo.Set(1)
	h.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo,
	)

	// Bind first: a busy port must fail before migrations run and secrets
	// are made and logged. Connections wait in the backlog until Serve.
	gcfg := httpguard.DefaultConfig()
	gcfg.MaxConns, gcfg.MaxConnsPerSource = h.cfg.MaxConns, h.cfg.MaxConnsPerSource
	h.guard = httpguard.New(h.log.With("component", "http"), gcfg, h.reg)
	h.ln, err = net.Listen("tcp", net.JoinHostPort(strings.Trim(h.cfg.Listen, "[]"), strconv.Itoa(h.cfg.Port)))
	if err != nil {
		return fmt.Errorf("listen on port %d: %w", h.cfg.Port, err)
	}
	// The guard counts TCP connections, so it sits under TLS.
	h.ln = h.guard.Listener(h.ln)

	scfg := store.DefaultConfig()
	scfg.DSN, scfg.MaxConns = h.cfg.DB, h.cfg.DBMaxConns
	h.db, err = store.Open(ctx, h.log.With("component", "store"), scfg)
	if err != nil {
		return err
	}
	for _, c := range h.db.Collectors() {
		if err := h.reg.Register(c); err != nil {
			return fmt.Errorf("register database metrics: %w", err)
		}
	}

	rcfg := store.DefaultRetentionConfig()
	rcfg.Hours, rcfg.Enabled = h.cfg.RetentionHours, h.cfg.Prune
	h.retention = store.NewRetention(h.log.With("component", "retention"), rcfg, h.db, h.reg)
	// Producers register their raw time-series tables here, before Start.
	for _, table := range slices.Concat(store.TrafficTables, store.FlowTables, store.SyslogTables, store.AgentTables) {
		if err := h.retention.Register(table, "ts"); err != nil {
			return fmt.Errorf("register retention: %w", err)
		}
	}
	if err := h.retention.Start(); err != nil {
		return fmt.Errorf("start retention: %w", err)
	}

	if err := h.startAccess(ctx); err != nil {
		return err
	}
	if err := h.startCapture(); err != nil {
		return err
	}
	if err := h.startCollectors(); err != nil {
		return err
	}
	if err := h.startFleet(ctx); err != nil {
		return err
	}
	access := h.cfg.Access
	proxies, err := config.ParseProxies(access.TrustedProxies)
	if err != nil {
		return err
	}
	if h.outbound == nil {
		h.outbound = &http.Client{Timeout: 15 * time.Second}
	}
	sso := ssoClient{oidc.New(h.log.With("component", "oidc"), oidc.Config{
		Issuer: access.OIDC.Issuer, ClientID: access.OIDC.ClientID, ClientSecret: access.OIDC.ClientSecret,
		RedirectURL: access.OIDCRedirectURL(), GroupRoles: access.OIDC.GroupRoles, DefaultRole: access.OIDC.DefaultRole,
	}, h.vault), h.outbound}

	acfg := api.DefaultConfig()
	acfg.Version = version.Version
	h.api, err = api.New(h.log.With("component", "api"), acfg, api.Deps{
		DB:             h.db,
		Metrics:        h.reg,
		UI:             ui.New(ui.Config{Dev: h.cfg.Dev}),
		Auth:           h.auth,
		SSO:            sso,
		Audit:          h.db,
		PublicURL:      access.PublicURL,
		TrustedProxies: proxies,
		History:        h.db,
		Capture:        h.capture,
		Conns:          h.conns,
		Geo:            h.geo,
		GeoStore:       h.db,
		Live:           h.live,
		Flows:          h.db,
		AuditLog:       h.db,
		Fleet:          h.fleet,
		CertAgentID:    pki.AgentID,
		Guard:          h.guard,
		LoopbackOnly:   h.loopbackOnly(),
	})
	if err != nil {
		return fmt.Errorf("build api: %w", err)
	}

	if h.pki != nil {
		// HTTPS with optional client certificates: browsers connect
		// without one, agents present theirs (spec 5 item 10).
		h.ln = tls.NewListener(h.ln, h.pki.ServerTLSConfig())
	}
	handler := h.api.Handler()
	if h.wrap != nil {
		handler = h.wrap(handler)
	}
	// Deadlines: headers within ReadHeaderTimeout of the connection's
	// acceptance (or of its first byte after an idle spell), each body
	// within its route's deadline (the guard, set from app/api); an idle
	// keep-alive is closed after IdleTimeout. The guard caps how many
	// connections may be open at once.
	h.srv = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ConnState:         h.guard.ConnState,
		ConnContext:       h.guard.ConnContext,
		ErrorLog:          slog.NewLogLogger(h.log.With("component", "http").Handler(), slog.LevelWarn),
	}
	go func() {
		if err := h.srv.Serve(h.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.serveErr <- err
		}
		close(h.serveErr)
	}()
	if !h.authRequired(ctx) {
		where := "on every interface"
		if h.loopbackOnly() {
			where = "on this machine only (" + h.cfg.Listen + ")"
		}
		h.log.Warn("authentication is OFF "+where+": no -auth-password and no user; every request is served as admin. Create an admin with `netmon admin user create --create` or set NETMON_AUTH_PASSWORD",
			"listen", h.ln.Addr().String())
	} else if len(h.liveOrigins()) == 0 {
		h.log.Warn("no -public-url (and no -tls-hosts): the live feed /ws accepts WebSocket upgrades from pages of any origin, guarded only by the session cookie's SameSite=Lax; set -public-url to the address users open")
	}
	if h.cfg.Access.AuthPassword != "" {
		if rbac, err := h.db.EnabledAdminExists(ctx); err == nil && rbac {
			h.log.Warn("the bootstrap password (-auth-password / NETMON_AUTH_PASSWORD) no longer signs anyone in: an enabled admin user exists (it works again only if no enabled admin remains); remove it from the configuration")
		}
	}
	h.log.Info("hub started",
		"version", version.Version,
		"addr", h.ln.Addr().String(),
		"db", h.db.Redacted(),
		"dialect", string(h.db.Dialect()),
		"retention_hours", h.cfg.RetentionHours,
		"prune", h.cfg.Prune,
		"dev", h.cfg.Dev,
		"tls", h.pki != nil,
		"startup_ms", time.Since(begin).Milliseconds())
	// Every file and directory the hub keeps, as absolute paths: started
	// from another directory, a relative path means other files.
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	files := []any{"vault_key", abs(h.cfg.Access.VaultKeyFile), "record_dir", abs(h.cfg.Capture.RecordDir), "geoip_dir", abs(h.cfg.Capture.GeoIPDir)}
	if h.db.Dialect() == store.SQLite {
		files = append(files, "database", abs(h.cfg.DB))
	}
	if h.pki != nil {
		files = append(files, "tls_dir", abs(h.cfg.Fleet.TLSDir))
	}
	h.log.Info("hub files", files...)
	// Start-up garbage (the GeoIP survey walks every network of each
	// database) is returned to the OS now rather than at the scavenger's
	// pace: idle RSS is what an operator looks at first.
	debug.FreeOSMemory()
	return nil
}

// loopbackOnly reports whether -listen keeps the hub on this machine.
func (h *Hub) loopbackOnly() bool {
	ip := net.ParseIP(strings.Trim(h.cfg.Listen, "[]"))
	return (ip != nil && ip.IsLoopback()) || h.cfg.Listen == "localhost"
}

// Log is the hub's logger.
func (h *Hub) Log() *slog.Logger { return h.log }

// Addr is the address the hub listens on (after Start).
func (h *Hub) Addr() net.Addr { return h.ln.Addr() }

// Errors delivers a fatal serving error, and is closed when serving ends.
func (h *Hub) Errors() <-chan error { return h.serveErr }

// Stop stops accepting connections, lets in-flight requests finish for up
// to DrainTimeout (or ctx's deadline if sooner), then stops the maintenance
// loop and closes the store. It is safe to call more than once.
func (h *Hub) Stop(ctx context.Context) error {
	h.stopOnce.Do(func() {
		var errs []error
		if h.srv != nil {
			dctx, cancel := context.WithTimeout(ctx, DrainTimeout)
			if err := h.srv.Shutdown(dctx); err != nil {
				errs = append(errs, fmt.Errorf("drain http: %w", err))
				_ = h.srv.Close()
			}
			cancel()
		} else if h.ln != nil {
			_ = h.ln.Close()
		}
		// Reverse order of Start: the feed, the capture (flushing its last
		// minute while the store is open), GeoIP, auth.
		if h.live != nil {
			_ = h.live.Stop()
		}
		if h.fleet != nil {
			_ = h.fleet.Stop()
		}
		errs = append(errs, h.stopCollectors()...)
		if h.capture != nil {
			if err := h.capture.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stop capture: %w", err))
			}
		}
		if h.geo != nil {
			_ = h.geo.Stop()
		}
		if h.auth != nil {
			_ = h.auth.Stop()
		}
		if h.retention != nil {
			if err := h.retention.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("stop retention: %w", err))
			}
		}
		if h.db != nil {
			if err := h.db.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close store: %w", err))
			}
		}
		h.stopErr = errors.Join(errs...)
		h.log.Info("hub stopped")
	})
	return h.stopErr
}
