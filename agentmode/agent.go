// Package agentmode is the netmon agent (spec 1, "Agent behaviour"; 2.9;
// 4.6): it enrolls with the hub, then sends a telemetry batch (interface
// counters, connection inventory and deep-collection sections) every
// interval the hub asks for.
//
// Production and sending are separate. A producer takes a batch every
// interval whatever the hub does, numbers it with the next seq (persisted)
// and appends it to an in-memory FIFO. A sender drains the oldest batch
// first: the offline queue on disk (agentmode/spool) when it holds any,
// else memory. A batch that cannot be sent goes to the queue with
// everything behind it, and the sender backs off (Backoff). Stopping
// writes what is still in memory to the queue, so nothing is lost across
// a restart.
//
// Identity and trust: the state file (agentmode/state) keeps the agent
// id and token, the machine id and the pinned hub CA. Three consecutive
// 401s make the agent enroll again with its enroll token. Over https the
// hub's certificate must chain to -hub-ca, or to the CA pinned at first
// use; the agent presents a client certificate the hub signed and renews
// it at half its life.
//
// Deep collection (per-process traffic, SNI/Host, DNS) runs inside the
// collector (agentmode/collect, capture/attr); the agent hands it the
// hub's pcap_enabled policy and stops it with the agent.
//
// Imports: agentmode/{wire,spool,state,collect,service}, app/version,
// capture/proc and capture/attr (through collect); nothing of the hub.
package agentmode

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"netmon/agentmode/collect"
	"netmon/agentmode/spool"
	"netmon/agentmode/state"
	"netmon/agentmode/wire"
)

// Source takes one telemetry batch; collect.Collector is the real one.
type Source interface {
	Collect(ctx context.Context) wire.Telemetry
}

// policySource is a Source that runs deep collection: it takes the hub's
// policy and has a backend to stop (collect.Collector).
type policySource interface {
	SetHubPolicy(enabled bool)
	Stop() error
}

// Agent is one running agent.
type Agent struct {
	log *slog.Logger
	cfg Config

	// Seams for tests; New sets the real ones.
	clock  Clock
	jitter func() float64
	// backoffAfter is the sender's wait between attempts.
	backoffAfter func(time.Duration) <-chan time.Time
	source       Source

	store *state.Store
	files state.Files
	queue *spool.Queue
	hub   *hubClient

	interval atomic.Int64 // seconds
	// intervalChanged wakes the producer when the hub changes the
	// interval, so a shorter one takes effect at once rather than after
	// the wait already started (capacity 1).
	intervalChanged chan struct{}

	mu   sync.Mutex
	mem  []wire.Telemetry // produced, not yet sent nor queued; oldest first
	wake chan struct{}    // a batch was produced (capacity 1)

	// Sender-only state.
	fails           int
	renewRetryAt    time.Time
	certUnsupported bool

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns an agent; it does no work until Start.
func New(log *slog.Logger, cfg Config) *Agent {
	cfg.HubURL = strings.TrimRight(strings.TrimSpace(cfg.HubURL), "/")
	cfg.EnrollToken = strings.TrimSpace(cfg.EnrollToken)
	if cfg.Version == "" {
		cfg.Version = DefaultConfig().Version
	}
	a := &Agent{
		log:    log,
		cfg:    cfg,
		clock:  realClock{},
		jitter: rand.Float64,
		source: collect.New(log, cfg.Collect),
		files:  state.FilesFor(cfg.StatePath),
		wake:   make(chan struct{}, 1),

		intervalChanged: make(chan struct{}, 1),
	}
	a.backoffAfter = func(d time.Duration) <-chan time.Time { return a.clock.After(d) }
	return a
}

// Run starts the agent, blocks until ctx is done, then stops it.
func (a *Agent) Run(ctx context.Context) error {
	if err := a.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	a.log.Info("stopping")
	return a.Stop()
}

// Start opens the state file and the offline queue, sets up trust and
// starts the producer and the sender.
func (a *Agent) Start(ctx context.Context) error {
	if err := a.cfg.Validate(); err != nil {
		return err
	}
	u, err := url.Parse(a.cfg.HubURL)
	if err != nil {
		return fmt.Errorf("hub.url: %w", err)
	}
	// The default state directory may not exist on a first run; the
	// queue and certificates are created beside the state file.
	if err := os.MkdirAll(filepath.Dir(a.cfg.StatePath), 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if a.store, err = state.Open(a.cfg.StatePath); err != nil {
		return err
	}
	st := a.store.Get()
	if st.Enrolled() && st.HubURL != "" && st.HubURL != a.cfg.HubURL {
		a.log.Warn("state file was enrolled with another hub URL; keeping its identity (it re-enrolls if the hub refuses it)",
			"state_hub", st.HubURL, "hub", a.cfg.HubURL)
	}
	if !st.Enrolled() && a.cfg.EnrollToken == "" {
		return fmt.Errorf("%w (state file %s holds no identity yet)", errNoEnrollToken, a.cfg.StatePath)
	}
	if ps, ok := a.source.(policySource); ok {
		ps.SetHubPolicy(!st.PcapDisabled)
	}
	a.interval.Store(int64(wire.DefaultIntervalSeconds))
	if st.IntervalSeconds > 0 {
		a.interval.Store(int64(st.IntervalSeconds))
	}

	a.hub = &hubClient{base: a.cfg.HubURL, ua: "netmon-agent/" + a.cfg.Version, trust: newTrust(u.Scheme == "https", u.Hostname(), a.clock.Now)}
	if err := a.setupTrust(u.Scheme == "https", st); err != nil {
		return err
	}

	q, skipped, dropped, err := spool.Open(a.files.Queue, spool.Max)
	if err != nil {
		return err
	}
	a.queue = q
	if skipped > 0 {
		a.log.Warn("offline queue had unreadable lines (a crash mid-write); skipped", "lines", skipped, "file", a.files.Queue)
	}
	a.queueDropped(dropped)
	if q.Len() > 0 {
		a.log.Info("offline queue holds batches from an earlier run", "batches", q.Len())
	}

	ctx, a.cancel = context.WithCancel(ctx)
	a.wg.Add(2)
	go func() { defer a.wg.Done(); a.produceLoop(ctx) }()
	go func() { defer a.wg.Done(); a.sendLoop(ctx) }()
	a.log.Info("agent started", "hub", a.cfg.HubURL, "name", a.cfg.Name, "site", a.cfg.Site,
		"state", a.cfg.StatePath, "enrolled", st.Enrolled(), "tls", a.hub.trust.current().String(),
		"collect_method", a.cfg.Collect.Method)
	return nil
}

// setupTrust picks the CA the hub's certificate is checked against:
// -hub-ca, else the pinned one, else trust on first use.
func (a *Agent) setupTrust(https bool, st state.State) error {
	if !https {
		if host := a.hub.trust.host; host != "localhost" && host != "127.0.0.1" && host != "::1" {
			a.log.Warn("hub.url is plain http: the agent token and telemetry cross the network in clear", "hub", a.cfg.HubURL)
		}
		return nil
	}
	switch {
	case a.cfg.HubCAFile != "":
		pemCA, err := os.ReadFile(a.cfg.HubCAFile)
		if err != nil {
			return fmt.Errorf("hub-ca: %w", err)
		}
		if err := a.hub.trust.useCA(modeOperator, "-hub-ca "+a.cfg.HubCAFile, pemCA); err != nil {
			return err
		}
	case st.CAPEM != "":
		if err := a.hub.trust.useCA(modePinned, "pinned", []byte(st.CAPEM)); err != nil {
			return fmt.Errorf("pinned CA in %s: %w", a.cfg.StatePath, err)
		}
	default:
		a.log.Warn("no hub CA pinned yet: the first server certificate will be trusted (pass -hub-ca to avoid trust on first use)")
	}
	a.loadClientCert()
	return nil
}

// Stop stops the loops and writes the batches still in memory to the
// offline queue.
func (a *Agent) Stop() error {
	if a.cancel == nil {
		return nil
	}
	a.cancel()
	a.wg.Wait()
	if ps, ok := a.source.(policySource); ok {
		if err := ps.Stop(); err != nil {
			a.log.Warn("deep collection did not stop cleanly", "err", err)
		}
	}
	err := a.spill()
	if cerr := a.queue.Close(); err == nil {
		err = cerr
	}
	a.hub.trust.close()
	if err != nil {
		return fmt.Errorf("save unsent batches: %w", err)
	}
	a.log.Info("agent stopped", "queued", a.queue.Len())
	return nil
}

func (a *Agent) intervalDuration() time.Duration {
	return time.Duration(a.interval.Load()) * time.Second
}

// adoptInterval takes the hub's telemetry interval (hello or telemetry
// answer); the producer uses it from its next wait on.
func (a *Agent) adoptInterval(sec int) {
	if sec <= 0 {
		return
	}
	if sec > 86400 {
		sec = 86400
	}
	old := a.interval.Swap(int64(sec))
	if old == int64(sec) {
		return
	}
	a.log.Info("telemetry interval changed", "from_seconds", old, "to_seconds", sec)
	select {
	case a.intervalChanged <- struct{}{}:
	default:
	}
	if err := a.store.Update(func(s *state.State) { s.IntervalSeconds = sec }); err != nil {
		a.log.Error("cannot save the state file", "err", err)
	}
}

// adoptPcapPolicy takes the hub's deep-collection policy (hello or
// telemetry answer): the collector applies it at the next batch, the state
// file keeps it for a restart.
func (a *Agent) adoptPcapPolicy(enabled bool) {
	if ps, ok := a.source.(policySource); ok {
		ps.SetHubPolicy(enabled)
	}
	if a.store.Get().PcapDisabled == !enabled {
		return
	}
	if err := a.store.Update(func(s *state.State) { s.PcapDisabled = !enabled }); err != nil {
		a.log.Error("cannot save the state file", "err", err)
	}
}

// queueDropped records batches the full offline queue discarded.
func (a *Agent) queueDropped(n int) {
	if n <= 0 {
		return
	}
	a.log.Warn("offline queue full: oldest batches dropped", "dropped", n, "max", spool.Max)
	a.addDropped(n)
}
