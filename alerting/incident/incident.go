package incident

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/store/record"
)

// Config tunes the correlation engine.
type Config struct {
	// Enabled runs the loop (with the alert engine: -alerts).
	Enabled bool
	// Every is the cadence; spec 6.4: about every 30 s.
	Every time.Duration
	// Window is the correlation window when the alert settings'
	// correlate_window_sec is 0.
	Window time.Duration
	// MinSuspicious is N of rule 5.
	MinSuspicious int
}

// DefaultConfig: every 30 s, a 10-minute window, N = 3.
func DefaultConfig() Config {
	return Config{Enabled: true, Every: 30 * time.Second, Window: 10 * time.Minute, MinSuspicious: 3}
}

// Store reads the window's alert events and keeps incidents (*store.DB).
type Store interface {
	RecentAlertEvents(ctx context.Context, since int64) ([]record.AlertEvent, error)
	UpsertIncident(ctx context.Context, inc record.Incident, members []int64) (record.Incident, bool, error)
}

// Correlator runs the rules over the window on its cadence.
type Correlator struct {
	// IsLeader says whether this replica correlates (spec 6.4: the
	// leader when several hubs share a database); nil: always. Set
	// before Start.
	IsLeader func() bool

	log    *slog.Logger
	cfg    Config
	store  Store
	window func() time.Duration
	now    func() time.Time
	m      *metrics

	cancel context.CancelFunc
	done   chan struct{}
}

// New builds the correlator; window returns the operator's
// correlate_window_sec as a duration (0: cfg.Window); now is the clock
// (nil: time.Now). It does no I/O.
func New(log *slog.Logger, cfg Config, st Store, window func() time.Duration, now func() time.Time, reg prometheus.Registerer) *Correlator {
	if now == nil {
		now = time.Now
	}
	if window == nil {
		window = func() time.Duration { return 0 }
	}
	return &Correlator{log: log, cfg: cfg, store: st, window: window, now: now, m: newMetrics(reg)}
}

// Start runs the loop when enabled.
func (c *Correlator) Start() error {
	if !c.cfg.Enabled {
		return nil
	}
	every := c.cfg.Every
	if every <= 0 {
		every = DefaultConfig().Every
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go func() {
		defer close(c.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if c.IsLeader == nil || c.IsLeader() {
					c.runGuarded(ctx)
				}
			}
		}
	}()
	return nil
}

// runGuarded runs one correlation and turns a panic into a counted
// metric and a logged error: the loop goes on with its next tick
// (RELIABILITY case 33).
func (c *Correlator) runGuarded(ctx context.Context) {
	defer func() {
		if r := recover(); r != nil {
			c.m.panics.Inc()
			c.log.Error("correlation panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	if _, err := c.RunOnce(ctx); err != nil && ctx.Err() == nil {
		c.log.Warn("correlate alert events", "error", err)
	}
}

// Stop ends the loop.
func (c *Correlator) Stop() error {
	if c.cancel != nil {
		c.cancel()
		<-c.done
	}
	return nil
}

// RunOnce correlates the current window and records the matches; it
// returns the incidents as stored.
func (c *Correlator) RunOnce(ctx context.Context) ([]record.Incident, error) {
	now := c.now()
	w := c.window()
	if w <= 0 {
		w = c.cfg.Window
	}
	evs, err := c.store.RecentAlertEvents(ctx, now.Add(-w).Unix())
	if err != nil {
		c.m.errors.Inc()
		return nil, err
	}
	var out []record.Incident
	for _, m := range Correlate(evs, c.cfg.MinSuspicious) {
		ids := make([]int64, len(m.Members))
		for i, e := range m.Members {
			ids[i] = e.ID
		}
		inc := record.Incident{Key: m.Key(), Rule: m.Rule, AgentID: m.AgentID, Site: m.Site, Severity: m.Severity, Risk: m.Risk,
			Title: m.Title, OpenedTS: now.Unix(), UpdatedTS: now.Unix()}
		stored, created, err := c.store.UpsertIncident(ctx, inc, ids)
		if err != nil {
			c.m.errors.Inc()
			return out, err
		}
		if created {
			c.m.created.Inc()
		} else {
			c.m.raised.Inc()
		}
		out = append(out, stored)
	}
	return out, nil
}

type metrics struct {
	created, raised, errors, panics prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		created: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_incidents_created_total", Help: "Incidents opened by the correlation engine."}),
		raised:  prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_incidents_repeated_total", Help: "Correlations that matched an open incident (its severity and risk may rise, never fall)."}),
		errors:  prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_incidents_errors_total", Help: "Failures reading alert events or writing incidents."}),
		panics:  prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_incidents_panics_total", Help: "Correlation runs that panicked; the loop goes on."}),
	}
	if reg != nil {
		reg.MustRegister(m.created, m.raised, m.errors, m.panics)
	}
	return m
}
