// Package alerting is the alert engine (spec 2.5, 2.6, 3, 6.3): it runs
// the rules of alerting/rules on their cadences, turns what they raise
// into alert events — one stored row per condition, a repeat while it is
// open only increments its count, a cooldown per kind|key, silences
// suppress — and resolves events whose condition stopped.
//
// It imports only leaves and its own subpackages: its inputs (the
// capture's rates, connection inventories, interface rates) and its
// storage come through the small interfaces below, which app/hub fills
// with the concrete capture, fleet and store. The configuration is this
// package's resource (settings_store.go: stored, sealed, audited, applied
// by SettingsService); the HTTP side (app/api) only translates. Applying
// it pushes the notifiers section to delivery (Deps.Notify).
package alerting

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/alerting/rules"
	"netmon/store/record"
)

// Store keeps alert events and silences (*store.DB through app/hub).
type Store interface {
	InsertAlertEvent(ctx context.Context, e record.AlertEvent) (record.AlertEvent, error)
	RepeatAlertEvent(ctx context.Context, id, count, ts int64) error
	ResolveAlertEvent(ctx context.Context, id, ts int64) error
	// OpenAlertEvents returns the firing and acknowledged events, so a
	// restarted hub goes on counting repeats instead of storing new rows.
	OpenAlertEvents(ctx context.Context) ([]record.AlertEvent, error)
	// AlertSilences returns the silences not ended at now.
	AlertSilences(ctx context.Context, now int64) ([]record.AlertSilence, error)
}

// TrafficSource is the hub's capture, as the bw and target rules read it.
type TrafficSource interface {
	Traffic() rules.Traffic
}

// InventorySource lists connection inventories: the hub host's and each
// agent's last batch (established connections only).
type InventorySource interface {
	Inventories(ctx context.Context) ([]rules.Inventory, error)
}

// IfaceSource lists interface rates with link speeds.
type IfaceSource interface {
	IfaceRates(ctx context.Context) ([]rules.IfaceRate, error)
}

// FirewallSource lists the firewall REST devices' latest polls (the
// vpn_down, sdwan_sla_breach and high_sessions rules).
type FirewallSource interface {
	FirewallStates(ctx context.Context) ([]rules.FirewallState, error)
}

// Deps are the engine's inputs; a nil source turns its rules off.
type Deps struct {
	Store   Store
	Traffic TrafficSource
	// IsLeader says whether this replica evaluates the rules (the leader
	// when several hubs share a database); nil: always.
	IsLeader func() bool
	// Inventories and Ifaces come from several owners each (the hub
	// host's sockets and the fleet's agents; the fleet's agents and the
	// device pollers): the engine reads them all every cycle, a source
	// that fails leaves only its own part out.
	Inventories []InventorySource
	Ifaces      []IfaceSource
	Firewalls   FirewallSource
	// Settings loads the stored alert configuration at Start
	// (SettingsRows.Load; SettingsService applies later changes).
	Settings func(ctx context.Context) (Settings, error)
	// Now is the clock (time.Now when nil); tests inject theirs.
	Now func() time.Time
	// Names and Threats feed the ioc rule (ioc.go): the names hosts
	// used, from each of their owners (the capture's DNS domains, the
	// agents' reports in the store), and the threat list; either empty
	// turns the rule off.
	Names   []NameSource
	Threats rules.IOCMatcher
	// Rates feeds the anomaly rule (anomaly_eval.go); nil turns it off.
	Rates RateSource
	// Sink receives every new stored event for delivery (alerting/notify);
	// nil: none. Offer must not block: the engine never waits on delivery.
	Sink EventSink
	// Notify gets the notifiers section of every configuration applied
	// (nil: none), so delivery holds the channels in force without
	// reading the engine.
	Notify NotifySettings
}

// EventSink takes new events — and resolved ones (state resolved), for
// the ticket channel to close its ticket — for delivery without blocking
// (false: it dropped the event and counted it).
type EventSink interface {
	Offer(ev record.AlertEvent) bool
}

// Engine evaluates the rules and keeps the events' lifecycle.
type Engine struct {
	log *slog.Logger
	cfg Config
	dep Deps
	m   *metrics

	// mu guards the evaluation state below; an evaluation holds it
	// across its store writes. Operators never take it: their changes go
	// through the inbox (inbox.go), so a storm's cycle cannot hold a
	// silence or a configuration change.
	mu       sync.Mutex
	settings Settings
	ignore   map[string]bool
	open     map[string]*openEvent // by kind|key
	last     map[string]time.Time  // last stored event by kind|key (cooldown)
	silences []record.AlertSilence
	silAt    time.Time
	in       inbox
	// openN mirrors len(open) for the gauge (a scrape must not wait on
	// an evaluation).
	openN atomic.Int64

	tickMu  sync.Mutex
	pending []record.AlertEvent // new events for the tick

	bw     rules.BW
	port   rules.Port
	proc   rules.Proc
	target rules.Target
	iface  rules.Iface
	buf    []rules.Alert
	ioc    rules.IOC
	iocBuf []rules.Alert
	// baselines and active are the anomaly rule's state
	// (anomaly_eval.go).
	baselines map[int64]*baselineCache
	active    []Deviation

	cancel context.CancelFunc
	done   chan struct{}
}

// openEvent is a firing or acknowledged event in memory.
type openEvent struct {
	id, count int64
	state     string
	lastSeen  time.Time
}

// New builds the engine; it does no I/O.
func New(log *slog.Logger, cfg Config, deps Deps, reg prometheus.Registerer) *Engine {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if cfg.MaxWritesPerCycle <= 0 {
		cfg.MaxWritesPerCycle = DefaultConfig().MaxWritesPerCycle
	}
	if cfg.CycleBudget <= 0 {
		cfg.CycleBudget = DefaultConfig().CycleBudget
	}
	e := &Engine{log: log, cfg: cfg, dep: deps, open: map[string]*openEvent{}, last: map[string]time.Time{}}
	e.m = newMetrics(reg, func() float64 { return float64(e.openN.Load()) })
	e.applyLocked(DefaultSettings())
	e.in.cur = DefaultSettings()
	return e
}

// Start loads the configuration, the open events and the silences, and,
// when enabled, starts the evaluation loops.
func (e *Engine) Start() error {
	ctx := context.Background()
	if err := e.Load(ctx); err != nil {
		return err
	}
	if !e.cfg.Enabled {
		return nil
	}
	// Whether the state just loaded is a leader's: a replica that leads
	// later reloads it first (run).
	leading := e.dep.IsLeader == nil || e.dep.IsLeader()
	ctx, e.cancel = context.WithCancel(ctx)
	e.done = make(chan struct{})
	go e.run(ctx, leading)
	return nil
}

// Load reads the stored configuration, the open events and the silences.
func (e *Engine) Load(ctx context.Context) error {
	if e.dep.Settings != nil {
		s, err := e.dep.Settings(ctx)
		if err != nil {
			return err
		}
		e.Apply(s)
	}
	if e.dep.Store == nil {
		return nil
	}
	evs, err := e.dep.Store.OpenAlertEvents(ctx)
	if err != nil {
		return err
	}
	e.lock()
	// The stored open events replace what was held: on a reload (a
	// replica become leader) an event another replica resolved is open
	// here no more.
	clear(e.open)
	for _, ev := range evs {
		k := ev.Kind + "|" + ev.Key
		e.open[k] = &openEvent{id: ev.ID, count: ev.Count, state: ev.State, lastSeen: time.Unix(ev.LastTS, 0)}
		if t := time.Unix(ev.TS, 0); t.After(e.last[k]) {
			e.last[k] = t
		}
	}
	e.unlock()
	return e.SilencesChanged(ctx)
}

// Stop ends the loops.
func (e *Engine) Stop() error {
	if e.cancel != nil {
		e.cancel()
		<-e.done
	}
	return nil
}

func (e *Engine) run(ctx context.Context, leading bool) {
	defer close(e.done)
	fast := time.NewTicker(e.cfg.SnapshotEvery)
	defer fast.Stop()
	slow := time.NewTicker(e.cfg.InventoryEvery)
	defer slow.Stop()
	iocEvery := e.cfg.IOCEvery
	if iocEvery <= 0 {
		iocEvery = DefaultConfig().IOCEvery
	}
	ioc := time.NewTicker(iocEvery)
	defer ioc.Stop()
	anomalyEvery := e.cfg.AnomalyEvery
	if anomalyEvery <= 0 {
		anomalyEvery = DefaultConfig().AnomalyEvery
	}
	anom := time.NewTicker(anomalyEvery)
	defer anom.Stop()
	// One replica evaluates (the leader when several hubs share a
	// database). A replica that becomes leader first reloads the open
	// events and silences the former leader wrote, so it neither
	// re-raises what is open nor forgets a count.
	leads := func() bool {
		if e.dep.IsLeader == nil {
			return true
		}
		now := e.dep.IsLeader()
		if now && !leading {
			if err := e.Load(ctx); err != nil {
				e.log.Warn("reload alert state on becoming leader", "error", err)
				return false
			}
		}
		leading = now
		return now
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-fast.C:
			if leads() {
				e.guard("snapshot", func() { e.EvalSnapshot(ctx) })
			}
		case <-slow.C:
			if leads() {
				e.guard("inventory", func() { e.EvalInventory(ctx) })
			}
		case <-ioc.C:
			if leads() {
				e.guard("ioc", func() { e.EvalIOC(ctx) })
			}
		case <-anom.C:
			if leads() {
				e.guard("anomaly", func() { e.EvalAnomaly(ctx) })
			}
		}
	}
}

// Apply makes s the configuration (PUT /api/alerts). It never waits on
// an evaluation: the change is mailed and taken before the next alert
// the engine raises (inbox.go).
func (e *Engine) Apply(s Settings) {
	c := s.clone()
	e.in.mu.Lock()
	e.in.settings, e.in.cur = &c, s.clone()
	e.in.mu.Unlock()
	e.in.waiting.Store(true)
	e.tryAbsorb()
	if e.dep.Notify != nil {
		e.dep.Notify.SetSettings(s.Notifiers.Delivery())
	}
}

func (e *Engine) applyLocked(s Settings) {
	e.settings = s.clone()
	e.port.SetPorts(s.Ports.Ports)
	e.ignore = make(map[string]bool, len(s.NewProc.Ignore))
	for _, p := range s.NewProc.Ignore {
		e.ignore[p] = true
	}
}

// Settings returns the configuration in force (the last applied).
func (e *Engine) Settings() Settings {
	e.in.mu.Lock()
	defer e.in.mu.Unlock()
	return e.in.cur.clone()
}

// SilencesChanged re-reads the silences (after a create or delete); like
// Apply it never waits on an evaluation.
func (e *Engine) SilencesChanged(ctx context.Context) error {
	if e.dep.Store == nil {
		return nil
	}
	now := e.dep.Now()
	list, err := e.dep.Store.AlertSilences(ctx, now.Unix())
	if err != nil {
		return err
	}
	e.in.mu.Lock()
	if !e.in.silSet || !now.Before(e.in.silAt) {
		e.in.silences, e.in.silAt, e.in.silSet = list, now, true
	}
	e.in.mu.Unlock()
	e.in.waiting.Store(true)
	e.tryAbsorb()
	return nil
}

// StateChanged tells the engine an operator acknowledged or resolved an
// event (already stored with its audit record). A resolved event closes:
// its condition firing again, once outside the cooldown, is a new event.
func (e *Engine) StateChanged(ev record.AlertEvent) {
	e.in.mu.Lock()
	e.in.states = append(e.in.states, ev)
	e.in.mu.Unlock()
	e.in.waiting.Store(true)
	e.tryAbsorb()
}

// Drain returns the events stored since the last call (for the
// WebSocket tick) and empties the buffer.
func (e *Engine) Drain() []record.AlertEvent {
	e.tickMu.Lock()
	defer e.tickMu.Unlock()
	out := e.pending
	e.pending = nil
	return out
}
