// Package fleet is the hub side of the agents (spec 2.9, 2.10, 3, 4.6),
// the component app/hub builds and the API calls. It composes three jobs,
// each its own package because each changes for its own reasons:
//
//   - enroll: enroll tokens, the static enroll secret, the hello that
//     enrolls an agent, client certificates (the fleet's door);
//   - intake: agent identity and telemetry intake with its JSON scanner
//     (the hot path, thousands of batches a second);
//   - agents: the agent queries and the archive of agents offline too
//     long (the read side and housekeeping).
//
// This package holds what they share: the Config, New (which splits the
// Config and the Deps among them and wires enroll and agents to the
// intake's memory), Start, Stop, and the registration of their metrics.
// Telemetry is handed to the ingest record.Sink like every other
// producer's records, so a full queue answers Unavailable and the agent
// keeps the batch in its spool. The hub's CA (app/fleet/pki) signs client
// certificates when TLS is on.
package fleet

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/fleet/agents"
	"netmon/app/fleet/enroll"
	"netmon/app/fleet/intake"
	"netmon/app/panics"
	"netmon/store/record"
)

// Store is what the fleet needs of the database (*store.DB): the union of
// its jobs' needs.
type Store interface {
	enroll.Store
	intake.Store
	agents.Store
	AlertStore
}

// Deps are the fleet's collaborators. DB and Auditor are always needed;
// the others only by the methods that use them, so a caller passes what
// it calls.
type Deps struct {
	// DB is the database (*store.DB).
	DB Store
	// Auditor builds the audit records of the fleet's changes
	// (app/audit.Builder).
	Auditor Auditor
	// Sink takes telemetry (the ingest queue); Telemetry needs it.
	Sink record.Sink
	// Limiter throttles failed enrollments per address; Hello needs it.
	Limiter Limiter
	// CA signs client certificates (*pki.Authority); nil when TLS is off.
	CA CA
	// Registry registers the metrics; nil registers none.
	Registry prometheus.Registerer
}

// Auditor builds audit records (enroll.Auditor, agents.Auditor).
type Auditor = enroll.Auditor

// CA signs agent client certificates (enroll.CA).
type CA = enroll.CA

// Limiter is the enrollment failure throttle (enroll.Limiter).
type Limiter = enroll.Limiter

// Service is the fleet component.
type Service struct {
	log    *slog.Logger
	cfg    Config
	enroll *enroll.Service
	intake *intake.Service
	agents *agents.Service

	// alertDB and inv serve the alert engine's reads (inventories.go,
	// alertrates.go).
	alertDB AlertStore
	inv     inventories
}

// New builds the fleet and its three jobs; it does no I/O (Start loads
// the agents).
func New(log *slog.Logger, cfg Config, deps Deps) *Service {
	d := DefaultConfig()
	if cfg.Interval <= 0 {
		cfg.Interval = d.Interval
	}
	if cfg.ArchiveEvery <= 0 {
		cfg.ArchiveEvery = d.ArchiveEvery
	}
	in := intake.New(log.With("job", "intake"), intake.Config{Interval: cfg.Interval, PcapEnabled: cfg.PcapEnabled}, deps.DB, deps.Sink)
	s := &Service{log: log, cfg: cfg, intake: in,
		enroll: enroll.New(log.With("job", "enroll"), enroll.Config{StaticToken: cfg.StaticToken, MultiSite: cfg.MultiSite, PcapEnabled: cfg.PcapEnabled,
			Interval: cfg.Interval}, deps.DB, deps.Auditor, deps.Limiter, deps.CA, in),
		agents: agents.New(log.With("job", "agents"), agents.Config{Interval: cfg.Interval, ArchiveDays: cfg.ArchiveDays, ArchiveEvery: cfg.ArchiveEvery,
			Archive: cfg.Archive}, deps.DB, deps.Auditor, in),
	}
	s.alertDB = deps.DB
	s.register(deps.Registry)
	s.agents.Panics = panics.New(deps.Registry, log, "fleet")
	return s
}

// Start warms the intake's memory of the enrolled agents and launches the
// archive loop when enabled.
func (s *Service) Start() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s.intake.Warm(ctx)
	return s.agents.Start()
}

// Stop ends the archive loop.
func (s *Service) Stop() error { return s.agents.Stop() }

// TLS reports whether client certificates can be issued.
func (s *Service) TLS() bool { return s.enroll.TLS() }
