// Package hub is the composition root of the hub process: New builds every
// component from the configuration in dependency order, Start starts them
// in that order and Stop stops them in exactly the reverse order. It is
// the only package that imports all the others (with app/api); nothing
// imports it but app/cli. Each component gets its own Config from
// config.HubConfig as is; the files here only wire: hub.go the process
// (metrics, listener, store, HTTP), access.go the vault, auth and SSO,
// capture.go GeoIP, capture and the live feed, collectors.go the ingest
// queue and listeners, fleet.go the CA and the agents.
package hub

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"netmon/alerting"
	"netmon/alerting/health"
	"netmon/alerting/incident"
	"netmon/alerting/notify"
	"netmon/app/ai"
	"netmon/app/leader"
	"netmon/collectors/geo/threat"
	"netmon/store/queue/natsq"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"netmon/app/api"
	"netmon/app/audit"
	"netmon/app/auth"
	"netmon/app/auth/oidc"
	"netmon/app/compliance"
	"netmon/app/config"
	"netmon/app/fleet"
	"netmon/app/fleet/pki"
	"netmon/app/httpguard"
	"netmon/app/live"
	"netmon/app/netguard"
	"netmon/app/reports"
	"netmon/app/topology"
	"netmon/app/version"
	"netmon/capture"
	"netmon/capture/proc"
	"netmon/collectors/devices"
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

// Hub is a built hub process: New builds it, Start runs it, Stop ends it.
type Hub struct {
	log   *slog.Logger
	cfg   config.HubConfig
	begin time.Time
	parts parts

	// reg is the metrics registry (a test wraps it to list every metric).
	reg interface {
		prometheus.Registerer
		prometheus.Gatherer
	}
	guard     *httpguard.Guard
	ln        net.Listener
	db        *store.DB
	retention *store.Retention
	vault     *vault.Vault
	auth      *auth.Service
	geo       *geo.Geo
	notifier  *notify.Notifier
	netGuard  *netguard.Guard // every outbound connection the hub makes
	capture   *capture.Capture
	conns     *proc.Lister
	live      *live.Broker
	queue     *queue.Channel
	flows     *flows.Collector
	syslog    *syslog.Receiver
	pki       *pki.Authority
	fleet     *fleet.Service
	alerts    *alerting.Engine
	// alertSettings and alertRoutes are the alert configuration and the
	// delivery routes as operators change them (alerts.go, notify.go).
	alertSettings *alerting.SettingsService
	alertRoutes   *notify.RouteService
	// health is the network health score beside the engine.
	health   *health.Service
	devices  *devices.Component
	topology *topology.Service
	// sla measures the SLA targets; reports generates, schedules and
	// archives reports.
	sla     *reports.SLA
	reports *reports.Service
	// ai is the advisory assistant (its triage and nightly parts beside).
	ai *ai.Service
	// leader is the lease of the loops that must run once per database.
	leader *leader.Leader
	// nats is the JetStream ingest queue (nil without -nats).
	nats *natsq.Queue
	// iocList and categories are the -ioc-file and
	// -domain-category-file watches (threat.go).
	incidents  *incident.Correlator
	iocList    *threat.Watch[*threat.List]
	categories *threat.Watch[*threat.Categories]
	sso        *oidc.Provider
	api        *api.Server
	srv        *http.Server

	// ingest is the sink producers write into: the queue, teed into the
	// compliance log when -compliance is on.
	ingest     compliance.IngestSink
	compliance *compliance.Service

	// wrap, when set (tests only), wraps the API handler.
	wrap func(http.Handler) http.Handler
	// outbound is the HTTP client for calls the hub makes (the OpenID
	// provider); tests point it at their own TLS servers.
	outbound *http.Client
	// emailTLS, when set (tests only), is the TLS configuration of the
	// SMTP channel: tests trust their own mail server's certificate.
	emailTLS *tls.Config
	// complianceNow, when set (tests only), is the compliance log's clock.
	complianceNow func() time.Time

	// newEnrollToken is the static enroll token made at this start (empty
	// when it was set or loaded): the start banner shows it once.
	newEnrollToken string

	serveErr chan error
	stopOnce sync.Once
	stopErr  error
}

// Option adjusts a hub before New builds it (tests: wrap, outbound).
type Option func(*Hub)

// New builds every component from cfg in dependency order; Start starts
// them. A Server.Port of 0 picks a free port (tests); Addr tells which.
//
// New does the little I/O building needs, each step saying why: it binds
// the listener first (a busy port must fail before migrations run and
// secrets are made and logged), opens the database (every service is
// built over it; opening applies migrations), loads the vault key (the
// SSO provider and the static enroll token are sealed with it), loads the
// CA (-tls) and the static enroll token (the fleet is built with them).
// On error what it opened is closed.
func New(ctx context.Context, log *slog.Logger, cfg config.HubConfig, opts ...Option) (_ *Hub, err error) {
	h := &Hub{log: log, cfg: cfg.Shared(), begin: time.Now(), serveErr: make(chan error, 1)}
	for _, o := range opts {
		o(h)
	}
	defer func() {
		if err != nil {
			_ = h.parts.stopAll(context.Background())
		}
	}()
	if h.reg == nil {
		h.reg = newRegistry()
	}
	h.netGuard = netguard.New(cfg.Outbound)
	if err := h.buildListener(); err != nil {
		return nil, err
	}
	if err := h.buildStore(ctx); err != nil {
		return nil, err
	}
	if err := h.buildAccess(ctx); err != nil {
		return nil, err
	}
	if err := h.buildCapture(); err != nil {
		return nil, err
	}
	// Every input of the alert engine before it: the threat list, the
	// ingest path (the fleet writes into it; the health score counts its
	// drops), the fleet and the device component. The compliance log,
	// built with the ingest path, is handed the engine once it exists.
	h.buildThreat()
	if err := h.buildCollectors(); err != nil {
		return nil, err
	}
	if err := h.buildFleet(ctx); err != nil {
		return nil, err
	}
	h.buildDevices()
	h.buildAlerts()
	h.buildTopology()
	h.buildIncidents()
	h.buildAI()
	if err := h.buildReports(); err != nil {
		return nil, err
	}
	// The live feed ticks from the capture and the alert engine.
	h.buildLive()
	if err := h.buildHTTP(); err != nil {
		return nil, err
	}
	return h, nil
}

// newRegistry is the hub's metrics registry with the process metrics.
func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "netmon_build_info",
		Help:        "Always 1; the labels say which build is running.",
		ConstLabels: prometheus.Labels{"version": version.Version, "commit": version.Commit, "protocol_version": strconv.Itoa(version.ProtocolVersion)},
	})
	buildInfo.Set(1)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildInfo)
	return reg
}

// buildListener binds the port (I/O: first, so that a busy port fails
// before anything else is done). Connections wait in the backlog until
// Start serves.
func (h *Hub) buildListener() error {
	h.guard = httpguard.New(h.log.With("component", "http"), h.cfg.HTTP, h.reg)
	s := h.cfg.Server
	ln, err := net.Listen("tcp", net.JoinHostPort(strings.Trim(s.Listen, "[]"), strconv.Itoa(s.Port)))
	if err != nil {
		return fmt.Errorf("listen on port %d: %w", s.Port, err)
	}
	// The guard counts TCP connections, so it sits under TLS.
	h.ln = h.guard.Listener(ln)
	// Closed by the server's Shutdown once serving; here when it never
	// did (closing the TLS listener buildHTTP may wrap it in closes it).
	guarded := h.ln
	h.parts.opened("listener", func(context.Context) error {
		_ = guarded.Close()
		return nil
	})
	return nil
}

// buildStore opens the database (I/O: see New) and the retention loop
// over the producers' raw time-series tables.
func (h *Hub) buildStore(ctx context.Context) error {
	db, err := store.Open(ctx, h.log.With("component", "store"), h.cfg.Store)
	if err != nil {
		return err
	}
	h.db = db
	h.parts.opened("store", noCtx(db.Close))
	for _, c := range db.Collectors() {
		if err := h.reg.Register(c); err != nil {
			return fmt.Errorf("register database metrics: %w", err)
		}
	}
	// The leader lease (issue 33): the loops that must run once run on
	// the replica holding it; first to start, last to stop.
	h.leader = leader.New(h.log.With("component", "leader"), leader.Config{}, leader.Deps{Store: db, Registerer: h.reg})
	h.parts.add("leader", h.leader.Start, noCtx(h.leader.Stop))
	h.retention = store.NewRetention(h.log.With("component", "retention"), h.cfg.Retention, db, h.reg)
	h.retention.IsLeader = h.leader.IsLeader
	for _, table := range slices.Concat(store.TrafficTables, store.FlowTables, store.SyslogTables, store.AgentTables, store.DeepTables, store.DeviceTables) {
		if err := h.retention.Register(table, "ts"); err != nil {
			return fmt.Errorf("register retention: %w", err)
		}
	}
	h.parts.add("retention", h.retention.Start, noCtx(h.retention.Stop))
	return nil
}

// buildHTTP builds the API over every service and the HTTP server that
// Start serves it with.
func (h *Hub) buildHTTP() error {
	proxies, err := config.ParseProxies(h.cfg.Server.TrustedProxies)
	if err != nil {
		return err
	}
	acfg := h.cfg.API
	acfg.Version = version.Version
	deps := api.Deps{
		DB:             h.db,
		Metrics:        h.reg,
		UI:             ui.New(h.cfg.UI),
		Auth:           h.auth,
		SSO:            h.sso,
		Audit:          h.db,
		PublicURL:      h.cfg.Server.PublicURL,
		TrustedProxies: proxies,
		History:        h.db,
		Capture:        h.capture,
		Conns:          h.conns,
		Geo:            h.geo,
		GeoStore:       h.db,
		Live:           h.live,
		Flows:          h.db,
		OpenFlows:      h.queue,
		FlowExporters:  h.flows,
		Deep:           h.db,
		AuditLog:       h.db,
		Vault:          h.vault,
		AlertSettings:  h.alertSettings,
		AlertRoutes:    h.alertRoutes,
		ChannelProbe:   notify.NewProbe(h.notifier, h.db, audit.Builder{}),
		Health:         h.health,
		AlertStore:     h.db,
		AlertEngine:    h.alerts,
		Notifier:       h.notifier,
		Deliveries:     h.db,
		DeviceService:  h.devices,
		Devices:        h.db,
		Topology:       h.topology,
		Threats:        threat.Lists{IOCWatch: h.iocList, CategoryWatch: h.categories},
		Incidents:      h.db,
		Anomalies:      h.alerts,
		Rates:          h.db,
		Fleet:          h.fleet,
		CertAgentID:    pki.AgentID,
		Guard:          h.guard,
		LoopbackOnly:   h.loopbackOnly(),
		Compliance:     h.compliance, ComplianceStore: h.db, ISMS: compliance.NewRegisters(h.db, audit.Builder{}),
		Reports: h.reports,
		SLA:     h.sla,
		AI:      h.ai,
	}
	if h.nats != nil {
		deps.IngestReady = h.nats.Ready
	}
	h.api, err = api.New(h.log.With("component", "api"), acfg, deps)
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
	h.parts.add("http", h.serve, h.drain)
	return nil
}

// serve starts serving on the bound listener.
func (h *Hub) serve() error {
	go func() {
		if err := h.srv.Serve(h.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.serveErr <- err
		}
		close(h.serveErr)
	}()
	return nil
}

// drain stops accepting connections and lets in-flight requests finish
// for up to DrainTimeout (or ctx's deadline if sooner).
func (h *Hub) drain(ctx context.Context) error {
	dctx, cancel := context.WithTimeout(ctx, DrainTimeout)
	defer cancel()
	if err := h.srv.Shutdown(dctx); err != nil {
		_ = h.srv.Close()
		return fmt.Errorf("drain: %w", err)
	}
	return nil
}

// Start starts the components in the order New built them, serving HTTP
// last, then says what a new operator must know. On error everything
// already started is stopped.
func (h *Hub) Start(ctx context.Context) error {
	if err := h.parts.startAll(); err != nil {
		_ = h.Stop(context.Background())
		return err
	}
	h.logStart(ctx)
	return nil
}

// loopbackOnly reports whether -listen keeps the hub on this machine.
func (h *Hub) loopbackOnly() bool {
	ip := net.ParseIP(strings.Trim(h.cfg.Server.Listen, "[]"))
	return (ip != nil && ip.IsLoopback()) || h.cfg.Server.Listen == "localhost"
}

// Log is the hub's logger.
func (h *Hub) Log() *slog.Logger { return h.log }

// Addr is the address the hub listens on.
func (h *Hub) Addr() net.Addr { return h.ln.Addr() }

// port is the TCP port the hub listens on.
func (h *Hub) port() int { return h.ln.Addr().(*net.TCPAddr).Port }

// Errors delivers a fatal serving error, and is closed when serving ends.
func (h *Hub) Errors() <-chan error { return h.serveErr }

// Stop stops every component in the reverse order of Start — HTTP first
// (draining in-flight requests for up to DrainTimeout or ctx's deadline),
// the database last — and returns their errors joined. It is safe to call
// more than once.
func (h *Hub) Stop(ctx context.Context) error {
	h.stopOnce.Do(func() {
		h.stopErr = h.parts.stopAll(ctx)
		h.log.Info("hub stopped")
	})
	return h.stopErr
}
