package enroll

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/errs"
	"netmon/store"
)

// Config configures enrollment.
type Config struct {
	// StaticToken is the -enroll-token secret (never empty in a hub: it
	// generates one when the operator gave none; "" refuses every
	// non-ent_ secret).
	StaticToken string
	// MultiSite enforces the -multi-site enrollment rules: only site-bound
	// enroll tokens enroll, and creating a token needs a site.
	MultiSite bool
	// PcapEnabled is the -agent-pcap policy sent in the hello.
	PcapEnabled bool
	// Interval is the telemetry interval the hello tells agents to use.
	Interval time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Store is what enrollment needs of the database (*store.DB).
type Store interface {
	InTx(ctx context.Context, fn func(*store.Tx) error) error
	ListEnrollTokens(ctx context.Context, site string) ([]store.EnrollToken, error)
	SetAgentCert(ctx context.Context, id, notAfter int64) error
}

// Limiter is the failure throttle of enrollment (5 failures a minute per
// address, then a minute's block): the identity service's throttle
// (*auth.Throttle).
type Limiter interface {
	// Admit reserves an attempt for key; ok is false when it is blocked.
	// done(true) records a success (which resets the key), done(false) a
	// failure.
	Admit(key string) (done func(success bool), ok bool)
}

// CA signs agent client certificates (*pki.Authority); nil when TLS is off.
type CA interface {
	SignClient(csrPEM string, agentID int64) (certPEM string, notAfter time.Time, err error)
	CAPEM() string
}

// Roster is told of each enrollment: the intake, which then resolves the
// new agent's token without the database and forgets the agent of the
// same machine it replaced (0: none).
type Roster interface {
	Enrolled(a store.Agent, replaced int64)
}

// Auditor builds the audit records of enrollment: app/audit's Builder,
// handed in by app/hub (services do not import each other).
type Auditor interface {
	Event(ctx context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent
}

// The actions enrollment records (app/audit lists every action of the
// chain; its tests hold these equal to that list), and their result.
const (
	ActionEnrollTokenCreate = "enroll_token.create"        // agent enrollment token
	ActionEnrollTokenRevoke = "enroll_token.revoke"        //
	ActionEnrollTokenUsed   = "enroll_token.used"          // an agent enrolled
	ActionStaticTokenRotate = "enroll_token.rotate_static" // the hub's generated static enroll token replaced
	ResultOK                = "ok"
	ResultDenied            = "denied" // a hello refused for a machine of another site
)

// ErrNoCA is returned by IssueCert when the hub runs without TLS.
var ErrNoCA = errs.NotFoundf("client certificates need the hub to run with -tls")

// Service is enrollment: enroll tokens, the hello, client certificates.
type Service struct {
	log     *slog.Logger
	cfg     Config
	db      Store
	auditor Auditor
	limit   Limiter
	ca      CA
	roster  Roster
	m       *metrics
}

// New returns the enrollment service. limit and roster are needed by
// Hello only, ca by the certificates (nil: the hub runs without TLS); the
// admin CLI, which only manages tokens, passes nil for all three.
func New(log *slog.Logger, cfg Config, db Store, auditor Auditor, limit Limiter, ca CA, roster Roster) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{log: log, cfg: cfg, db: db, auditor: auditor, limit: limit, ca: ca, roster: roster, m: newMetrics()}
}

// TLS reports whether client certificates can be issued.
func (s *Service) TLS() bool { return s.ca != nil }

// Collectors returns enrollment's metrics, for the fleet to register.
func (s *Service) Collectors() []prometheus.Collector { return []prometheus.Collector{s.m.hellos} }

type metrics struct {
	hellos *prometheus.CounterVec // result
}

func newMetrics() *metrics {
	return &metrics{hellos: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "netmon_agent_hellos_total",
		Help: "Agent enrollment attempts, by result (ok, unauthorized, forbidden, exhausted, throttled, invalid).",
	}, []string{"result"})}
}
