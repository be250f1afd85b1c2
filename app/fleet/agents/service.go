package agents

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
	"netmon/store"
)

// Config configures the agent queries and the archive.
type Config struct {
	// Interval is the agents' telemetry interval: an agent is online
	// while its last batch is at most three intervals old.
	Interval time.Duration
	// ArchiveDays deletes agents offline this many days (0 = never).
	ArchiveDays int
	// ArchiveEvery is the period of the archive run.
	ArchiveEvery time.Duration
	// Archive runs the archive loop (false on all but one hub sharing a
	// database, like -prune).
	Archive bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Store is what the agent queries need of the database (*store.DB).
type Store interface {
	InTx(ctx context.Context, fn func(*store.Tx) error) error
	Agent(ctx context.Context, id int64) (store.Agent, error)
	ListAgents(ctx context.Context, site string) ([]store.Agent, error)
	AgentHistory(ctx context.Context, id, from int64) ([]store.AgentSample, error)
	OfflineAgents(ctx context.Context, before int64) ([]int64, error)
}

// Auditor builds the audit records of agent changes: app/audit's
// Builder, handed in by app/hub (services do not import each other).
type Auditor interface {
	Event(ctx context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent
}

// The actions recorded here (app/audit lists every action of the chain;
// its tests hold these equal to that list), and their result.
const (
	ActionAgentUpdate = "agent.update" // display name changed
	ActionAgentDelete = "agent.delete" // by an operator, or archived after ArchiveDays offline
	ResultOK          = "ok"
)

// Roster is told of each deleted agent (the intake), so that its token
// and certificate stop working at once.
type Roster interface {
	Forget(id int64)
}

// Service answers the agent queries and runs the archive.
type Service struct {
	// Panics counts a panic of the archive loop (app/hub sets it on the
	// hub's registry; nil still recovers, uncounted).
	Panics  *panics.Guard
	log     *slog.Logger
	cfg     Config
	db      Store
	auditor Auditor
	roster  Roster
	m       *metrics

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// New returns the service; Start launches the archive loop.
func New(log *slog.Logger, cfg Config, db Store, auditor Auditor, roster Roster) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{log: log, cfg: cfg, db: db, auditor: auditor, roster: roster, m: newMetrics(), stop: make(chan struct{})}
}

// Collectors returns the archive's metrics, for the fleet to register.
func (s *Service) Collectors() []prometheus.Collector { return []prometheus.Collector{s.m.archived} }

type metrics struct {
	archived prometheus.Counter
}

func newMetrics() *metrics {
	return &metrics{archived: prometheus.NewCounter(prometheus.CounterOpts{
		Name: "netmon_agents_archived_total",
		Help: "Agents deleted by the archive after -agent-archive-days offline.",
	})}
}
