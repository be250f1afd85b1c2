package live

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"netmon/store"
)

// FleetSummary is the fleet part of a tick (spec 6.1, issue 33): the
// agents and the NetFlow rate as the shared database has them, so every
// hub sharing it sends the same figures. A site-bound client gets its
// site's (Tick.ForSite).
type FleetSummary struct {
	// AgentsOnline are the agents whose last telemetry is at most three
	// telemetry intervals old, as the agent list's online flag.
	AgentsOnline int `json:"agents_online"`
	// AgentsTotal are the enrolled agents, online or not.
	AgentsTotal int `json:"agents_total"`
	// RxBps, TxBps and Pps are each agent's mean over its samples of about
	// the last 90 s (bytes/s received, bytes/s sent, packets/s), summed
	// over the agents.
	RxBps float64 `json:"rx_bps"`
	TxBps float64 `json:"tx_bps"`
	Pps   float64 `json:"pps"`
	// NetflowFps is flow records per second over the last closed flow
	// minute (the minute that ended at least FlowSettle ago, so that it is
	// written): for a site, the exporters of its devices (as the flow
	// reads scope a site); for every site, all exporters.
	NetflowFps float64 `json:"netflow_fps"`
	// TS is when the figures were read (Unix seconds): a summary kept
	// over a database error shows its age.
	TS int64 `json:"ts"`
}

// FleetSites are the summaries of one read: every site's and each site's.
type FleetSites struct {
	All   FleetSummary
	Sites map[string]FleetSummary
}

// For is the summary an identity bound to site sees ("" every site's); a
// site without agents or flows has zeros.
func (f *FleetSites) For(site string) FleetSummary {
	if site == "" {
		return f.All
	}
	if s, ok := f.Sites[site]; ok {
		return s
	}
	return FleetSummary{TS: f.All.TS}
}

// Fleet hands a tick the current fleet summaries (*FleetSource); nil when
// there are none yet.
type Fleet interface {
	Fleet(ctx context.Context) *FleetSites
}

// FleetStore is the read of the summary (*store.DB).
type FleetStore interface {
	LiveFleet(ctx context.Context, q store.LiveFleetQuery) (store.LiveFleet, error)
}

var _ FleetStore = (*store.DB)(nil)

// FleetConfig sets how the summary is computed; zero values take the
// defaults.
type FleetConfig struct {
	// Interval is the agents' telemetry interval (the hub's
	// -agent-interval): online is at most three of them old. Default 30 s.
	Interval time.Duration
	// Window is how far back the agents' samples are averaged. Default
	// 90 s.
	Window time.Duration
	// CacheFor is how long a read serves every tick and client before the
	// next one. Default 3 s.
	CacheFor time.Duration
	// FlowSettle is how long after its end a flow minute is taken as
	// written: the aggregator's 5 s grace plus the write. Default 15 s.
	FlowSettle time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// FleetSource computes the fleet summaries from the database at most once
// per CacheFor, however many ticks ask, and only when a tick asks (the
// broker ticks only while someone listens). Safe for concurrent use.
type FleetSource struct {
	log *slog.Logger
	db  FleetStore
	cfg FleetConfig

	mu sync.Mutex
	// tried is when the database was last asked, answered or not: a
	// database that fails is asked again after CacheFor, not every tick.
	tried time.Time
	last  *FleetSites
}

// NewFleetSource returns the fleet summaries' source; it reads nothing
// until asked.
func NewFleetSource(log *slog.Logger, db FleetStore, cfg FleetConfig) *FleetSource {
	if cfg.Interval <= 0 {
		cfg.Interval = 30 * time.Second
	}
	if cfg.Window <= 0 {
		cfg.Window = 90 * time.Second
	}
	if cfg.CacheFor <= 0 {
		cfg.CacheFor = 3 * time.Second
	}
	if cfg.FlowSettle <= 0 {
		cfg.FlowSettle = 15 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &FleetSource{log: log, db: db, cfg: cfg}
}

// Fleet returns the summaries, read again when the last read is CacheFor
// old. A failed read keeps the previous summaries (logged at debug: the
// tick goes on without fresh figures); nil until a read succeeds.
func (f *FleetSource) Fleet(ctx context.Context) *FleetSites {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.cfg.Now()
	if !f.tried.IsZero() && now.Sub(f.tried) < f.cfg.CacheFor {
		return f.last
	}
	f.tried = now
	unix := now.Unix()
	closedEnd := (unix - int64(f.cfg.FlowSettle/time.Second)) / 60 * 60
	got, err := f.db.LiveFleet(ctx, store.LiveFleetQuery{
		OnlineSince:  unix - int64(3*f.cfg.Interval/time.Second),
		SamplesSince: unix - int64(f.cfg.Window/time.Second),
		FlowMinute:   closedEnd - 60,
	})
	if err != nil {
		f.log.Debug("fleet summary not read; the previous one is sent", "error", err)
		return f.last
	}
	sites := &FleetSites{All: summary(got.All, unix), Sites: make(map[string]FleetSummary, len(got.Sites))}
	for _, s := range got.Sites {
		sites.Sites[s.Site] = summary(s, unix)
	}
	f.last = sites
	return sites
}

func summary(s store.LiveFleetSite, ts int64) FleetSummary {
	return FleetSummary{AgentsOnline: s.AgentsOnline, AgentsTotal: s.AgentsTotal, RxBps: s.RxBps, TxBps: s.TxBps, Pps: s.Pps,
		NetflowFps: float64(s.Flows) / 60, TS: ts}
}
