// Package api is the hub's HTTP surface: THE route table (routes.go), one
// handler file per resource, the middleware every request passes through
// (request id, metrics and access log, body limits and deadlines, CSRF, and
// authorize, the one access check driven by each row's permission), and
// writeError, the one place an error becomes a status. The machinery that
// turns rows into handlers and into the OpenAPI document lives in
// app/api/router.
//
// It sits under app/hub, which hands in the concrete services; api
// declares the small interfaces it needs (Pinger, Accounts, Fleet,
// FlowStore, ...) and, as one of the two packages that fan in, imports
// the services' request and response types.
package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/api/router"
	"netmon/app/auth"
	"netmon/app/auth/oidc"
	"netmon/app/history"
	"netmon/app/httpguard"
	"netmon/capture"
	"netmon/collectors/flows"
	"netmon/store"
)

// Config is the API server's configuration.
type Config struct {
	// Version is reported by /healthz and in the OpenAPI info block.
	Version string
	// BodyLimit is the default request body limit in bytes; larger bodies
	// get 413 before the handler runs.
	BodyLimit int64
	// AccessLog logs every request at INFO (-access-log); otherwise at
	// DEBUG, so a first run's log keeps the start banner in view instead
	// of a line per click.
	AccessLog bool
	// MetricsToken is a bearer that reads /metrics and nothing else
	// (-metrics-token), for a Prometheus scraper that holds no account:
	// /metrics shows every site's agents and traffic, so without it only
	// admins that are not site-bound read it. Empty: no scrape token.
	MetricsToken string
}

// DefaultConfig returns the defaults: a 1 MiB body limit.
func DefaultConfig() Config {
	return Config{Version: "dev", BodyLimit: 1 << 20}
}

// Pinger reports whether the database answers; *store.DB implements it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Deps are the components the API serves from.
type Deps struct {
	// DB is checked by /readyz.
	DB Pinger
	// Metrics is the hub's registry: /metrics serves it and the HTTP
	// metrics are registered on it.
	Metrics interface {
		prometheus.Registerer
		prometheus.Gatherer
	}
	// UI serves every GET/HEAD outside /api (the UI shell fallback).
	UI http.Handler
	// Auth identifies callers and manages users, tokens and sessions
	// (*auth.Service). Required: there is no open default.
	Auth Accounts
	// SSO is the OpenID Connect login; nil or disabled answers 404.
	SSO SSO
	// Audit reads and verifies the audit chain.
	Audit AuditReader
	// PublicURL is the hub's external address: a trusted origin for the
	// CSRF check and the Secure flag of cookies when it is https.
	PublicURL string
	// TrustedProxies may set the client address with X-Forwarded-For.
	TrustedProxies []netip.Prefix
	// History reads the minute history of the capture (*store.DB).
	History history.Store
	// Capture is the hub-local capture (always present; with -capture=false
	// it answers that it is disabled).
	Capture *capture.Capture
	// Conns lists the host's sockets.
	Conns ConnLister
	// Geo gives countries and ASNs; GeoStore sums traffic per country.
	Geo      GeoLookup
	GeoStore interface {
		TrafficByCountry(ctx context.Context, from int64) ([]store.CountryTraffic, error)
	}
	// Live serves the WebSocket feed /ws (after authorization).
	Live http.Handler
	// Flows reads flows, syslog and events (*store.DB).
	Flows FlowStore
	// OpenFlows hands the flow reads the minutes not written yet
	// (*queue.Channel), so that a flow shows within a second or two of
	// its arrival rather than when its minute closes; nil: the stored
	// minutes only.
	OpenFlows OpenFlows
	// FlowExporters lists the flow exporters seen since start and their
	// retimed records (*flows.Collector); nil answers an empty list.
	FlowExporters interface{ Exporters() []flows.ExporterStatus }
	// Deep reads the agents' per-process, L7 and DNS aggregates
	// (*store.DB); nil answers empty lists.
	Deep DeepStore
	// Fleet enrolls agents and serves their routes; authorize resolves
	// agent credentials through it (AgentAuthenticator).
	Fleet Fleet
	// CertAgentID reads the agent id of a verified client certificate
	// (nil without TLS).
	CertAgentID CertAgentID
	// LoopbackOnly is true when the hub listens on a loopback address
	// only (-listen 127.0.0.1): with authentication off it is then not
	// exposed to the network.
	LoopbackOnly bool
	// Guard gives request bodies their deadline and learns when a request
	// has arrived whole (nil: no body deadline; unit tests).
	Guard *httpguard.Guard
	// AuditLog appends records of operate-level actions (*store.DB).
	AuditLog interface {
		AppendAudit(ctx context.Context, e store.AuditEvent) (store.AuditEvent, error)
	}
	// Vault seals device credentials (*vault.Vault).
	Vault Sealer
	// AlertSettings is the alert configuration (*alerting.SettingsService);
	// AlertRoutes the routing rules of delivery (*notify.RouteService).
	AlertSettings AlertSettings
	AlertRoutes   AlertRoutes
	// ChannelProbe runs a channel's "send test" (*notify.Probe).
	ChannelProbe ChannelProbe
	// Health is the network health score (*health.Service; nil: 100).
	Health NetworkScore
	// AlertStore reads alert events and silences (*store.DB);
	// AlertEngine learns of operators' changes (*alerting.Engine, nil:
	// not built).
	AlertStore  AlertStore
	AlertEngine AlertNotifier
	// Notifier delivers alert events (*notify.Notifier, nil: not built);
	// Deliveries reads its log (*store.DB).
	Notifier   Notifier
	Deliveries DeliveryLog
	// Compliance is the compliance log (nil: status shows it off);
	// ComplianceStore keeps the reviews (*store.DB).
	Compliance      Compliance
	ComplianceStore ComplianceStore
	// ISMS are the ISMS registers (*compliance.Registers).
	ISMS ISMSRegisters
	// Reports generates, schedules and archives reports
	// (*reports.Service); SLA keeps the SLA targets (*reports.SLA). nil:
	// empty lists, 503 on generation and changes.
	Reports Reports
	SLA     SLATargets
	// IngestReady reports whether the NATS ingest queue is connected
	// (natsq.Queue.Ready); nil without -nats. /readyz answers 503 while
	// it fails.
	IngestReady func() error
	// AI is the advisory assistant (*ai.Service); nil or off: status
	// answers {enabled:false}, the other AI routes 404.
	AI Assistant
	// DeviceService is the device registry and its probe
	// and series (*devices.Component; nil: empty lists, 503 on changes);
	// Devices keeps uplinks (*store.DB); Topology builds the graph
	// (*topology.Service).
	DeviceService DeviceService
	Devices       DeviceStore
	Topology      TopologyBuilder
	// Incidents reads and moves correlated incidents (*store.DB); nil:
	// empty list.
	Incidents IncidentStore
	// Anomalies is the engine's anomaly side and Rates the traffic
	// minutes its bands come from (nil: empty answers).
	Anomalies AnomalyEngine
	Rates     RateStore
	// Threats gives the threat list and domain categories
	// (/api/v1/threatintel, /api/v1/enrich); nil: none.
	Threats ThreatLists
}

// Sealer seals secrets kept in the database (*vault.Vault).
type Sealer interface {
	Seal(plaintext, associatedData []byte) ([]byte, error)
	Open(blob, associatedData []byte) ([]byte, error)
}

// SSO is the OpenID Connect login (app/auth/oidc.Provider).
type SSO interface {
	Enabled() bool
	Begin(ctx context.Context, w http.ResponseWriter, r *http.Request) (string, error)
	Finish(ctx context.Context, w http.ResponseWriter, r *http.Request) (oidc.Login, error)
}

// AuditReader lists and verifies the audit chain (*store.DB).
type AuditReader interface {
	ListAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditEvent, error)
	VerifyAudit(ctx context.Context) (store.AuditVerify, error)
}

// Accounts is the auth service (*auth.Service): authorize asks its
// Authenticator part who a credential is; the session and admin handlers
// manage sessions, users and tokens through the rest.
type Accounts interface {
	Authenticator
	Login(ctx context.Context, req auth.LoginRequest, ip, oldToken string) (string, *auth.Identity, error)
	LoginSSO(ctx context.Context, l auth.SSOLogin, oldToken string) (string, *auth.Identity, error)
	Logout(ctx context.Context, id *auth.Identity) error
	ListUsers(ctx context.Context, actor *auth.Identity) ([]auth.UserView, error)
	CreateUser(ctx context.Context, actor *auth.Identity, req auth.UserCreate) (auth.UserView, error)
	UpdateUser(ctx context.Context, actor *auth.Identity, id int64, req auth.UserUpdate) (auth.UserView, error)
	DeleteUser(ctx context.Context, actor *auth.Identity, id int64) error
	ListTokens(ctx context.Context, actor *auth.Identity) ([]auth.TokenView, error)
	CreateToken(ctx context.Context, actor *auth.Identity, req auth.TokenCreate) (auth.TokenCreated, error)
	DeleteToken(ctx context.Context, actor *auth.Identity, id int64) error
	SignIn(ctx context.Context) (rbacUsers, bootstrap bool, err error)
}

// Authenticator is what the access check needs of the auth service: who a
// session or API token is, whether authentication is on (and the open
// identity when it is not), the site mode, and recording a refusal.
type Authenticator interface {
	Authenticate(ctx context.Context, cr auth.Credentials) (*auth.Identity, error)
	Required(ctx context.Context) (bool, error)
	OpenIdentity() *auth.Identity
	MultiSite() bool
	Denied(ctx context.Context, id *auth.Identity, perm auth.Permission, route string)
}

// Server is the hub's HTTP API.
type Server struct {
	log     *slog.Logger
	cfg     Config
	deps    Deps
	engine  *gin.Engine
	routes  []router.Route
	doc     *router.Document
	metrics *httpMetrics
	// metricsHandler serves /metrics from deps.Metrics.
	metricsHandler http.Handler
	// cop is the CSRF check of cookie and login requests.
	cop *http.CrossOriginProtection
	// templates maps gin's path syntax to the table's OpenAPI template,
	// the route label of the metrics.
	templates map[string]string
	// bodyTimeouts maps "METHOD ginPath" to a route's own body deadline.
	bodyTimeouts map[string]time.Duration
}

// New builds the engine from the route table and renders the document.
// It does no I/O.
func New(log *slog.Logger, cfg Config, deps Deps) (*Server, error) {
	return build(log, cfg, deps, (*Server).routeTable)
}

// build is New with the table as a parameter, so tests can serve extra
// routes through the very same machinery.
func build(log *slog.Logger, cfg Config, deps Deps, table func(*Server) []router.Route) (*Server, error) {
	if deps.Auth == nil {
		// Fail closed: no access check is never "everyone is admin".
		return nil, fmt.Errorf("api: no auth service (Deps.Auth)")
	}
	if deps.Metrics == nil {
		deps.Metrics = prometheus.NewRegistry()
	}
	if cfg.BodyLimit <= 0 {
		cfg.BodyLimit = DefaultConfig().BodyLimit
	}
	s := &Server{log: log, cfg: cfg, deps: deps, templates: map[string]string{}, bodyTimeouts: map[string]time.Duration{}, cop: http.NewCrossOriginProtection()}
	if deps.PublicURL != "" {
		u, err := url.Parse(deps.PublicURL)
		if err != nil {
			return nil, fmt.Errorf("public url: %w", err)
		}
		if err := s.cop.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
			return nil, fmt.Errorf("public url as trusted origin: %w", err)
		}
	}
	m, err := newHTTPMetrics(deps.Metrics)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	s.metricsHandler = newMetricsHandler(deps.Metrics)
	s.routes = table(s)
	if err := router.CheckTable(s.routes); err != nil {
		return nil, err
	}
	if s.doc, err = router.Render(s.routes, docInfo(cfg.Version)); err != nil {
		return nil, fmt.Errorf("render openapi document: %w", err)
	}
	s.engine = s.buildEngine()
	return s, nil
}

// Handler returns the http.Handler to serve.
func (s *Server) Handler() http.Handler { return s.engine }

// Routes returns the route table.
func (s *Server) Routes() []router.Route { return s.routes }

// buildEngine builds the engine: the middleware every request passes
// through, then the table through router.Register (the only caller of
// engine.Handle), each route behind its own chain (middleware).
func (s *Server) buildEngine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	// Strict paths: /healthz/ is a 404, not a redirect a client may not follow.
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	// Route on the escaped path, so an escaped "/" stays inside one
	// segment (process names such as "kworker/u8:2" in
	// /api/v1/agents/{id}/processes/{name}); parameters are unescaped.
	e.UseRawPath = true
	e.UnescapePathValues = true
	// Handlers use *gin.Context as their context.Context: make it the request's.
	// They get a copy, not gin's pooled Context (router.handlerContext).
	e.ContextWithFallback = true
	// The client address is the direct peer unless it is a configured
	// trusted proxy; then gin takes X-Forwarded-For / X-Real-IP, ignoring
	// unparsable values (RELIABILITY case 21).
	var proxies []string
	for _, p := range s.deps.TrustedProxies {
		proxies = append(proxies, p.String())
	}
	_ = e.SetTrustedProxies(proxies) // already parsed: cannot fail
	e.Use(s.recoverer, s.bodyDeadline, s.requestID, s.observe, securityHeaders, requestInfo, s.csrf)
	e.Use(compressJSON) // JSON answers of /api/ gzip-compressed when accepted (compress.go)
	for _, r := range s.routes {
		ginPath := router.GinPath(r.Path)
		s.templates[ginPath] = r.Path
		if r.BodyTimeout > 0 {
			s.bodyTimeouts[r.Method+" "+ginPath] = r.BodyTimeout
		}
	}
	router.Register(e, s.routes, s.middleware, s.writeError)
	e.NoRoute(s.noRoute)
	e.NoMethod(func(c *gin.Context) {
		c.AbortWithStatusJSON(http.StatusMethodNotAllowed, ErrorBody{
			Error: fmt.Sprintf("method %s not allowed on %s; allowed: %s", c.Request.Method, c.Request.URL.Path, c.Writer.Header().Get("Allow")),
		})
	})
	return e
}

// noRoute answers unknown /api paths with a JSON 404 and everything else
// that is a GET or HEAD with the UI shell.
func (s *Server) noRoute(c *gin.Context) {
	p := c.Request.URL.Path
	isAPI := p == "/api" || strings.HasPrefix(p, "/api/")
	if !isAPI && (c.Request.Method == http.MethodGet || c.Request.Method == http.MethodHead) && s.deps.UI != nil {
		s.deps.UI.ServeHTTP(c.Writer, c.Request)
		return
	}
	c.AbortWithStatusJSON(http.StatusNotFound, ErrorBody{Error: fmt.Sprintf("no such endpoint: %s %s (the list is at /api/docs)", c.Request.Method, p)})
}

// middleware is the chain of one route before its handler: the body
// limit, the detached context of a change, and the access check.
func (s *Server) middleware(r router.Route) []gin.HandlerFunc {
	limit := s.cfg.BodyLimit
	if r.BodyLimit > 0 {
		limit = r.BodyLimit
	}
	chain := []gin.HandlerFunc{s.bodyLimit(limit)}
	if changes(r.Method) && !r.FollowsClient {
		chain = append(chain, detach)
	}
	return append(chain, s.authorize(r))
}
