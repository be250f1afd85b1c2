// Package leader elects, among the hub replicas sharing one database, the
// one that runs the loops that must run once (alert evaluation, the
// device poller, pruning, report schedules, ...; issue 33). It holds a
// lease row in the database (store.AcquireLease) renewed every Renew and
// taken over by another replica once it expires; IsLeader says whether
// this replica holds it now, and Token is the fencing token the loops
// check inside their write transactions (store.Tx.Fence), so a paused old
// leader's write is refused after another replica took over.
//
// A replica counts itself leader only until its last successful renewal
// (timed from before the call) plus TTL − Renew: it steps down by itself
// at least Renew before its lease can expire in the database, whether its
// renewals fail, stall or its goroutine is stuck. A lone hub takes the
// lease too; it always wins.
package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
)

// Store is the lease table (store.DB implements it).
type Store interface {
	AcquireLease(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (token int64, ok bool, err error)
	ReleaseLease(ctx context.Context, name, holder string, token int64) error
}

// DefaultTTL is the lease period when Config.TTL is zero: a dead leader
// is replaced within it.
const DefaultTTL = 15 * time.Second

// DefaultName is the lease of the hub's once-only loops.
const DefaultName = "hub"

// releaseTimeout bounds Stop's release of the lease.
const releaseTimeout = 5 * time.Second

// Config is the election's configuration.
type Config struct {
	// Name is the lease's name; "" is DefaultName.
	Name string
	// TTL is the lease period; 0 is DefaultTTL.
	TTL time.Duration
	// Renew is the period of the renewal (and of a follower's attempts
	// to take over); 0 is TTL/3. It may be at most TTL/2: a leader
	// steps down at its last renewal + TTL − Renew.
	Renew time.Duration
	// ReplicaID names this replica in the lease row; "" is
	// hostname-pid-random, unique per process.
	ReplicaID string
}

// Deps are the election's collaborators.
type Deps struct {
	Store Store
	// Registerer takes the metrics; nil: not registered.
	Registerer prometheus.Registerer
	// Now is the wall clock whose Unix milliseconds go into the lease
	// row; nil is time.Now. The step-down deadline runs on the
	// monotonic clock whatever Now says.
	Now func() time.Time
}

// Leader is one replica's side of the election. Its methods are safe for
// concurrent use.
type Leader struct {
	log   *slog.Logger
	cfg   Config
	deps  Deps
	guard *panics.Guard
	m     metrics

	// base is the monotonic origin of until.
	base time.Time
	// until is the step-down deadline in nanoseconds after base while
	// leading, 0 otherwise; token the lease's token while leading, 0
	// otherwise. IsLeader and Token read them without a lock.
	until atomic.Int64
	token atomic.Int64

	mu      sync.Mutex // held while changing the state below and announcing it
	leading bool       // as last announced
	held    int64      // the token of the last lease taken (for the release)
	timer   *time.Timer
	hooks   []func(bool)

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type metrics struct {
	leader  prometheus.Gauge
	changes prometheus.Counter
	errors  prometheus.Counter
}

// New builds the election; it does nothing until Start.
func New(log *slog.Logger, cfg Config, deps Deps) *Leader {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Renew <= 0 {
		cfg.Renew = cfg.TTL / 3
	}
	if cfg.ReplicaID == "" {
		cfg.ReplicaID = defaultReplicaID()
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	labels := prometheus.Labels{"lease": cfg.Name}
	m := metrics{
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "netmon_leader", ConstLabels: labels,
			Help: "1 while this replica holds the lease and runs the once-only loops (alert evaluation, poller, pruning, schedules), else 0."}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_leader_changes_total", ConstLabels: labels,
			Help: "Times this replica became or stopped being the leader."}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_leader_renew_errors_total", ConstLabels: labels,
			Help: "Lease acquisitions or renewals that failed with a database error; a leader that cannot renew steps down before its lease expires."}),
	}
	if deps.Registerer != nil {
		deps.Registerer.MustRegister(m.leader, m.changes, m.errors)
	}
	return &Leader{log: log.With("lease", cfg.Name, "replica", cfg.ReplicaID), cfg: cfg, deps: deps, m: m,
		guard: panics.New(deps.Registerer, log, "leader"), base: time.Now()}
}

// defaultReplicaID is hostname-pid-random: unique per process even for
// containers sharing a hostname and pid 1.
func defaultReplicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "hub"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Start makes a first attempt at once (a lone hub leads when Start
// returns; a database error there is logged and counted, not returned)
// and then renews or tries to take over every Renew until Stop.
func (l *Leader) Start() error {
	if l.deps.Store == nil {
		return errors.New("leader: no store")
	}
	if l.cfg.Renew > l.cfg.TTL/2 {
		return fmt.Errorf("leader: renew period %s is more than half the lease period %s", l.cfg.Renew, l.cfg.TTL)
	}
	if l.cancel != nil {
		return errors.New("leader: already started")
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	_ = l.guard.Do(func() { l.attempt(ctx) })
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.guard.Keep(ctx.Done(), func() { l.run(ctx) })
	}()
	l.log.Info("leader election started", "ttl", l.cfg.TTL, "renew", l.cfg.Renew, "leading", l.IsLeader())
	return nil
}

func (l *Leader) run(ctx context.Context) {
	tick := time.NewTicker(l.cfg.Renew)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			l.attempt(ctx)
		}
	}
}

// attempt takes or renews the lease once. Success makes this replica the
// leader until start + TTL − Renew, start being taken before the call so
// that however long the call took, the deadline comes Renew before the
// expiry the database recorded. A refusal steps down at once; an error
// leaves the deadline as it was, so a database that stays unreachable
// makes the leader step down at it.
func (l *Leader) attempt(ctx context.Context) {
	start := time.Since(l.base)
	actx, cancel := context.WithTimeout(ctx, l.cfg.Renew)
	defer cancel()
	tok, ok, err := l.deps.Store.AcquireLease(actx, l.cfg.Name, l.cfg.ReplicaID, l.deps.Now(), l.cfg.TTL)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		// Stopping: Stop steps down and releases.
		return
	case err != nil:
		l.m.errors.Inc()
		l.log.Warn("lease renewal failed", "err", err, "leading", l.leading)
		l.checkDeadline()
	case !ok:
		l.stepDown()
	default:
		until := start + l.cfg.TTL - l.cfg.Renew
		if until <= time.Since(l.base) {
			// The call outlasted the margin: the lease may already be
			// seen as expired by another replica.
			l.stepDown()
			return
		}
		l.held = tok
		l.token.Store(tok)
		l.until.Store(int64(until))
		if l.timer != nil {
			l.timer.Stop()
		}
		l.timer = time.AfterFunc(until-time.Since(l.base), func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.checkDeadline()
		})
		l.announce(true)
	}
}

// checkDeadline steps down once the deadline has passed. l.mu is held.
func (l *Leader) checkDeadline() {
	if l.leading && time.Since(l.base) >= time.Duration(l.until.Load()) {
		l.log.Warn("lease not renewed in time: stepping down", "token", l.token.Load())
		l.stepDown()
	}
}

// stepDown clears the deadline and the token and announces it. l.mu is
// held.
func (l *Leader) stepDown() {
	l.until.Store(0)
	l.token.Store(0)
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.announce(false)
}

// announce records a change of state, in the metrics and to the hooks.
// l.mu is held, so hooks see the changes in order.
func (l *Leader) announce(leading bool) {
	if l.leading == leading {
		return
	}
	l.leading = leading
	l.m.changes.Inc()
	if leading {
		l.m.leader.Set(1)
		l.log.Info("this replica is now the leader", "token", l.token.Load())
	} else {
		l.m.leader.Set(0)
		l.log.Info("this replica is no longer the leader")
	}
	for _, h := range l.hooks {
		_ = l.guard.Do(func() { h(leading) })
	}
}

// Stop ends the renewals, steps down (the hooks hear false) and releases
// the lease, so another replica takes over at its next attempt instead
// of after the expiry. The loops should be stopped, or at least told by
// the hook, first: a write they fence afterwards is refused.
func (l *Leader) Stop() error {
	if l.cancel == nil {
		return nil
	}
	l.cancel()
	l.wg.Wait()
	l.cancel = nil
	l.mu.Lock()
	held := l.held
	wasLeading := l.leading
	l.stepDown()
	l.mu.Unlock()
	if !wasLeading || held == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	if err := l.deps.Store.ReleaseLease(ctx, l.cfg.Name, l.cfg.ReplicaID, held); err != nil {
		// Not fatal: the lease expires within TTL.
		l.log.Warn("lease release failed; another replica takes over at its expiry", "err", err)
		return err
	}
	return nil
}

// IsLeader reports whether this replica holds the lease now. It is two
// atomic loads and a clock read: loops call it at each iteration.
func (l *Leader) IsLeader() bool {
	until := l.until.Load()
	return until != 0 && time.Since(l.base) < time.Duration(until)
}

// Token returns the fencing token of the lease while this replica leads,
// and 0 (which no lease carries, so Fence refuses it) otherwise.
func (l *Leader) Token() int64 {
	if !l.IsLeader() {
		return 0
	}
	return l.token.Load()
}

// ReplicaID returns this replica's id, as recorded in the lease row.
func (l *Leader) ReplicaID() string { return l.cfg.ReplicaID }

// Name returns the lease's name (for Fence).
func (l *Leader) Name() string { return l.cfg.Name }

// OnChange adds a hook called with true when this replica becomes the
// leader and false when it steps down (also when the deadline passes
// without a renewal, and at Stop), in order. A hook must return quickly
// and must not call OnChange; IsLeader and Token are safe in it.
func (l *Leader) OnChange(hook func(leader bool)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, hook)
}
