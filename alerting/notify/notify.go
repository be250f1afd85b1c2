// Package notify delivers alert events to the operator's channels
// (spec 2.5 notifiers, 6.4): chat webhooks, messenger, team chat, e-mail,
// the signed webhook v2 and the SIEM forwarder of alerting/siem.
//
// The engine hands each new event to Offer, which never blocks: a
// bounded queue fair between sources (fairq.go), full = the largest
// source's lowest severity dropped and counted by reason. Each channel
// limits each source's rate and sums the rest in a digest
// (ratelimit.go). The intake routes every
// event (route.go) and stores one pending delivery per channel; one
// worker per channel takes due deliveries from the store, sends them a
// few at a time and writes the outcomes back, so a slow receiver holds
// only its own channel. Failures are retried with a doubling pause for a
// bounded time; the pending rows are the queue, so a restarted hub goes
// on where it stopped (at-least-once: a crash between a send and its
// outcome being written sends that one again). Every outbound connection
// is dialled through app/netguard.
package notify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/alerting/siem"
	"netmon/app/netguard"
	"netmon/store/record"
)

// Store keeps the deliveries (*store.DB through app/hub).
type Store interface {
	InsertDeliveries(ctx context.Context, ds []record.AlertDelivery) error
	DueDeliveries(ctx context.Context, channel string, now int64, limit int) ([]record.AlertDelivery, error)
	FinishDeliveries(ctx context.Context, ds []record.AlertDelivery) error
	// AlertEvent and SetAlertExtRef keep the ticket reference.
	AlertEvent(ctx context.Context, id int64) (record.AlertEvent, error)
	SetAlertExtRef(ctx context.Context, id int64, ref string) error
	// An alert group (group_id: the incident an event first joined)
	// shares one ticket: GroupExtRef reads it, SetGroupExtRef stores it
	// on the members without one, GroupTicketHolders lists one holder
	// per distinct reference for the closes.
	GroupExtRef(ctx context.Context, groupID int64) (string, error)
	SetGroupExtRef(ctx context.Context, groupID int64, ref string) error
	GroupTicketHolders(ctx context.Context, groupID int64) ([]record.AlertEvent, error)
}

// Deps are the notifier's inputs.
type Deps struct {
	Store Store
	// Settings returns the channels in force (read at every batch, so a
	// PUT /api/alerts applies at once); nil: the last SetSettings, which
	// the alert engine calls on each configuration it applies.
	Settings func() Settings
	// Routes reads the stored routing rules at Start (nil: none); the
	// route service (routes_store.go) replaces them after an operator's
	// change.
	Routes RouteLoader
	// Guard dials every outbound connection (nil = no allow-list).
	Guard *netguard.Guard
	// EmailTLS, when set, is the TLS configuration of SMTP (tests trust
	// their own certificate with it).
	EmailTLS *tls.Config
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Notifier routes and delivers events.
type Notifier struct {
	log      *slog.Logger
	cfg      Config
	dep      Deps
	m        *metrics
	guard    *netguard.Guard
	client   *http.Client
	emailTLS *tls.Config
	hostname string
	now      func() time.Time

	q   *fairQueue
	lim *limiter // nil: no rate limit
	// groupEnds carries the alert groups that resolved (their tickets close).
	groupEnds chan groupEnd
	wake      map[string]chan struct{}

	// groupLocks serialises the ticket opens of one group, so members
	// sent in parallel open one ticket.
	groupLocks keyedLocks

	routesMu sync.RWMutex
	routes   []Route

	// pushed holds the channels of the last SetSettings.
	pushed atomic.Pointer[Settings]

	siemMu  sync.Mutex
	siemFwd *siem.Forwarder

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New builds the notifier; it does no I/O.
func New(log *slog.Logger, cfg Config, deps Deps, reg prometheus.Registerer) *Notifier {
	def := DefaultConfig()
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = def.QueueSize
	}
	if cfg.Batch <= 0 {
		cfg.Batch = def.Batch
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = def.Parallel
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = def.Timeout
	}
	if cfg.RetryFirst <= 0 {
		cfg.RetryFirst = def.RetryFirst
	}
	if cfg.RetryMax < cfg.RetryFirst {
		cfg.RetryMax = cfg.RetryFirst
	}
	if cfg.GiveUpAfter <= 0 {
		cfg.GiveUpAfter = def.GiveUpAfter
	}
	if cfg.Poll <= 0 {
		cfg.Poll = def.Poll
	}
	if cfg.RateBurst == 0 {
		cfg.RateBurst = def.RateBurst
	}
	if cfg.RateEvery <= 0 {
		cfg.RateEvery = def.RateEvery
	}
	if cfg.DigestEvery <= 0 {
		cfg.DigestEvery = def.DigestEvery
	}
	if cfg.MessengerBaseURL == "" {
		cfg.MessengerBaseURL = def.MessengerBaseURL
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Guard == nil {
		deps.Guard = netguard.New(netguard.DefaultConfig())
	}
	host := cfg.Hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	if host == "" {
		host = "netmon"
	}
	n := &Notifier{log: log, cfg: cfg, dep: deps, m: newMetrics(reg), guard: deps.Guard, emailTLS: deps.EmailTLS,
		hostname: host, now: deps.Now, q: newFairQueue(cfg.QueueSize),
		groupEnds: make(chan groupEnd, 256), wake: map[string]chan struct{}{}}
	if n.dep.Settings == nil {
		n.pushed.Store(&Settings{})
		n.dep.Settings = func() Settings { return *n.pushed.Load() }
	}
	if cfg.RateBurst > 0 {
		n.lim = newLimiter(cfg.RateBurst, cfg.RateEvery)
	}
	n.client = deps.Guard.HTTPClient(netguard.ClientOptions{Timeout: cfg.Timeout, MaxIdlePerHost: cfg.Parallel})
	for _, c := range Channels {
		n.wake[c] = make(chan struct{}, 1)
	}
	return n
}

// Offer hands a new event over without ever blocking; false means the
// queue was full and the event was dropped (counted). A true may have
// evicted another event of a larger source (counted, fairq.go).
func (n *Notifier) Offer(ev record.AlertEvent) bool {
	queued, dropped := n.q.push(ev)
	if dropped != "" {
		n.m.dropped.WithLabelValues(dropped).Inc()
	}
	return queued
}

// Start runs the intake and one worker per channel.
func (n *Notifier) Start() error {
	if n.dep.Store == nil {
		return errors.New("notify: no store")
	}
	if n.dep.Routes != nil {
		rs, err := n.dep.Routes.Load(context.Background())
		if err != nil {
			return err
		}
		n.SetRoutes(rs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.wg.Add(1)
	go n.intake(ctx)
	for _, c := range Channels {
		n.wg.Add(1)
		go n.worker(ctx, c)
	}
	return nil
}

// SetSettings makes s the channels in force (the alert engine calls it
// on each configuration it applies); unused when Deps.Settings is set.
func (n *Notifier) SetSettings(s Settings) {
	n.pushed.Store(&s)
}

// SetRoutes replaces the routing rules (after an operator's change, stored).
func (n *Notifier) SetRoutes(rs []Route) {
	n.routesMu.Lock()
	n.routes = append([]Route(nil), rs...)
	n.routesMu.Unlock()
}

// Routes returns the routing rules in force, in order.
func (n *Notifier) Routes() []Route {
	n.routesMu.RLock()
	defer n.routesMu.RUnlock()
	return append([]Route(nil), n.routes...)
}

// Stop ends the loops; events still queued are stored as pending first,
// so the next start delivers them.
func (n *Notifier) Stop() error {
	if n.cancel == nil {
		return nil
	}
	n.cancel()
	n.wg.Wait()
	n.cancel = nil
	n.siemMu.Lock()
	if n.siemFwd != nil {
		_ = n.siemFwd.Close()
	}
	n.siemMu.Unlock()
	return nil
}

func (n *Notifier) intake(ctx context.Context) {
	defer n.wg.Done()
	digests := time.NewTicker(n.cfg.DigestEvery)
	defer digests.Stop()
	for {
		select {
		case <-ctx.Done():
			// Store what is queued, on a context of its own.
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			for {
				batch := n.q.take(nil, intakeBatch)
				if len(batch) == 0 {
					break
				}
				n.recoverPass("intake", func() { n.route(sctx, batch) })
			}
			for len(n.groupEnds) > 0 {
				g := <-n.groupEnds
				n.recoverPass("intake", func() { n.closeGroup(sctx, g) })
			}
			n.recoverPass("intake", func() { n.flushDigests(sctx) })
			cancel()
			return
		case <-n.q.ready:
			batch := n.q.take(nil, intakeBatch)
			if !n.recoverPass("intake", func() { n.route(ctx, batch) }) {
				// The pass died before storing its deliveries.
				n.m.dropped.WithLabelValues(DropPanic).Add(float64(len(batch)))
			}
		case g := <-n.groupEnds:
			n.recoverPass("intake", func() { n.closeGroup(ctx, g) })
		case <-digests.C:
			n.recoverPass("intake", func() { n.flushDigests(ctx) })
		}
	}
}

// intakeBatch is how many queued events one routing pass takes.
const intakeBatch = 512

// recoverPass runs one pass of a loop and turns a panic into a counted metric
// and a logged error; the loop goes on (RELIABILITY case 33).
// It reports whether fn returned normally.
func (n *Notifier) recoverPass(loop string, fn func()) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			n.m.panics.WithLabelValues(loop).Inc()
			n.log.Error("notifier panicked", "loop", loop, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	fn()
	return true
}

// flushDigests stores one delivery per pending digest (ratelimit.go).
func (n *Notifier) flushDigests(ctx context.Context) {
	now := n.now()
	var ds []record.AlertDelivery
	for _, d := range n.lim.digests(now) {
		ts := now.Unix()
		ds = append(ds, record.AlertDelivery{Channel: d.channel, Route: KindDigest, Status: record.DeliveryPending,
			CreatedTS: ts, NextTS: ts, UpdatedTS: ts, Event: d.ev})
	}
	n.store(ctx, ds, 0)
}

// route stores one pending delivery per event and routed channel.
func (n *Notifier) route(ctx context.Context, evs []record.AlertEvent) {
	enabled := n.dep.Settings().Enabled()
	routes := n.Routes()
	now := n.now().Unix()
	var ds []record.AlertDelivery
	for _, ev := range evs {
		if ev.State == record.AlertResolved {
			// A resolved event closes its ticket, if one was opened.
			if !slices.Contains(enabled, Ticket) {
				continue
			}
			stored, err := n.dep.Store.AlertEvent(ctx, ev.ID)
			// A grouped event's ticket is the group's: it closes when
			// the group resolves (GroupResolved), not with one member.
			if err != nil || stored.ExtRef == "" || stored.GroupID > 0 {
				continue
			}
			stored.State, stored.ResolvedTS = record.AlertResolved, max(stored.ResolvedTS, ev.ResolvedTS)
			ds = append(ds, record.AlertDelivery{EventID: ev.ID, Channel: Ticket, Route: "resolved", Status: record.DeliveryPending,
				CreatedTS: now, NextTS: now, UpdatedTS: now, Event: stored})
			continue
		}
		for _, t := range Routing(routes, enabled, ev) {
			if !n.lim.allow(t.Channel, ev, n.now()) {
				n.m.digested.WithLabelValues(t.Channel).Inc()
				continue
			}
			ds = append(ds, record.AlertDelivery{EventID: ev.ID, Channel: t.Channel, Route: t.Route, Status: record.DeliveryPending,
				CreatedTS: now, NextTS: now, UpdatedTS: now, Event: ev})
		}
	}
	n.store(ctx, ds, len(evs))
}

// store inserts pending deliveries (retrying a failing store a little)
// and wakes their channels' workers; events is what is lost on failure.
func (n *Notifier) store(ctx context.Context, ds []record.AlertDelivery, events int) {
	if len(ds) == 0 {
		return
	}
	var err error
	for try := 0; try < 3; try++ {
		if err = n.dep.Store.InsertDeliveries(ctx, ds); err == nil {
			break
		}
		n.m.storeError.Inc()
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		n.log.Error("store deliveries", "count", len(ds), "error", err)
		n.m.dropped.WithLabelValues(DropStoreError).Add(float64(events))
		return
	}
	woken := map[string]bool{}
	for _, d := range ds {
		n.m.routed.WithLabelValues(d.Channel).Inc()
		if !woken[d.Channel] {
			woken[d.Channel] = true
			select {
			case n.wake[d.Channel] <- struct{}{}:
			default:
			}
		}
	}
}

func (n *Notifier) worker(ctx context.Context, channel string) {
	defer n.wg.Done()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		due, err := n.dep.Store.DueDeliveries(ctx, channel, n.now().Unix(), n.cfg.Batch)
		if err != nil && ctx.Err() == nil {
			n.m.storeError.Inc()
			n.log.Warn("read due deliveries", "channel", channel, "error", err)
		}
		if len(due) > 0 {
			n.recoverPass("deliver", func() { n.deliver(ctx, channel, due) })
			continue
		}
		t.Reset(n.cfg.Poll)
		select {
		case <-ctx.Done():
			return
		case <-n.wake[channel]:
		case <-t.C:
		}
	}
}

// deliver sends a batch, Parallel at a time, and stores the outcomes of
// the sends it made. Stopping, it starts no new send; the rows it did not
// try stay pending as stored.
func (n *Notifier) deliver(ctx context.Context, channel string, due []record.AlertDelivery) {
	s := n.dep.Settings()
	sem := make(chan struct{}, n.cfg.Parallel)
	var wg sync.WaitGroup
	tried := 0
	for i := range due {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		tried++
		wg.Add(1)
		go func(d *record.AlertDelivery) {
			defer func() { <-sem; wg.Done() }()
			sctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
			err := n.sendGuarded(sctx, channel, s, d.Event, d.ID)
			cancel()
			n.outcome(d, err)
		}(&due[i])
	}
	wg.Wait()
	// The outcomes are written on a context of their own: a send that
	// happened must be recorded even while stopping.
	wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.dep.Store.FinishDeliveries(wctx, due[:tried]); err != nil {
		n.m.storeError.Inc()
		n.log.Warn("store delivery outcomes", "channel", channel, "error", err)
	}
}

// sendGuarded is send with a panic turned into that delivery's permanent
// failure and a counted metric: one bad event or channel never stops the
// others (RELIABILITY case 33).
func (n *Notifier) sendGuarded(ctx context.Context, channel string, s Settings, ev record.AlertEvent, delivery int64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			n.m.panics.WithLabelValues("send").Inc()
			n.log.Error("notifier send panicked", "channel", channel, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = permanent(errors.New("internal error while sending"))
		}
	}()
	return n.send(ctx, channel, s, ev, delivery)
}

// outcome updates d after an attempt and counts it.
func (n *Notifier) outcome(d *record.AlertDelivery, err error) {
	now := n.now()
	d.Attempts++
	d.UpdatedTS = now.Unix()
	switch {
	case err == nil:
		d.Status, d.Error = record.DeliveryDelivered, ""
		n.m.results.WithLabelValues(d.Channel, "delivered").Inc()
	case errors.Is(err, ErrPermanent) || now.Sub(time.Unix(d.CreatedTS, 0)) >= n.cfg.GiveUpAfter:
		d.Status, d.Error = record.DeliveryFailed, err.Error()
		n.m.results.WithLabelValues(d.Channel, "failed").Inc()
	default:
		d.Error = err.Error()
		d.NextTS = now.Add(n.backoff(d.Attempts)).Unix()
		n.m.results.WithLabelValues(d.Channel, "retry").Inc()
	}
}

// backoff is the pause after the nth failed attempt: RetryFirst doubled
// n-1 times, at most RetryMax.
func (n *Notifier) backoff(attempt int) time.Duration {
	d := n.cfg.RetryFirst
	for i := 1; i < attempt && d < n.cfg.RetryMax; i++ {
		d *= 2
	}
	return min(d, n.cfg.RetryMax)
}

// Test sends a synthetic event to one channel at once (the console's
// "send test" button). The error names the failure (status, refusal,
// SMTP reply) but never carries the remote body.
func (n *Notifier) Test(ctx context.Context, channel string) error {
	ev := record.AlertEvent{ID: 0, TS: n.now().Unix(), Kind: "test", Key: "test", Severity: 1, State: record.AlertFiring,
		Message: "netmon test notification", Count: 1, LastTS: n.now().Unix()}
	ctx, cancel := context.WithTimeout(ctx, n.cfg.Timeout)
	defer cancel()
	err := n.send(ctx, channel, n.dep.Settings(), ev, 0)
	result := "delivered"
	if err != nil {
		result = "failed"
	}
	n.m.results.WithLabelValues(channel, "test_"+result).Inc()
	return err
}

// sendSIEM forwards through a kept forwarder, rebuilt when the settings
// change (its TCP connection is kept between events).
func (n *Notifier) sendSIEM(ctx context.Context, s SIEM, ev record.AlertEvent) error {
	cfg := siem.Config{Format: s.Format, Transport: s.Transport, Target: s.Target, Token: s.Token, Insecure: s.Insecure, Framing: s.Framing, Hostname: n.hostname}
	n.siemMu.Lock()
	if n.siemFwd == nil || n.siemFwd.Config() != cfg {
		if n.siemFwd != nil {
			_ = n.siemFwd.Close()
		}
		n.siemFwd = siem.New(cfg, n.guard)
	}
	f := n.siemFwd
	n.siemMu.Unlock()
	err := f.Send(ctx, ev)
	if errors.Is(err, netguard.ErrBlocked) {
		return permanent(err)
	}
	return err
}
