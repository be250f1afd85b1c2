// Package triage runs the assistant's two background jobs (issue 32,
// spec 1 ai.triage and ai.nightly, spec 8): Triage writes a short
// assessment of each new incident and alert at or above min_severity (at
// most max_per_hour, the rest dropped and counted), and Nightly writes
// the daily or weekly summary on its spec and mails it. Both only call
// ai.Analyst, which stores the conversation and audits it; both run on
// the leader only when several hubs share a database, and keep their
// place in the settings table, each step claimed with a compare-and-swap,
// so neither a restart nor a second hub repeats one.
package triage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/ai"
	"netmon/app/panics"
	"netmon/store"
	"netmon/store/record"
)

// CursorKey is the settings key of triage's place: the last incident and
// alert event ids handled and the instants of the last hour's
// assessments (the sliding window of max_per_hour), as JSON.
const CursorKey = "ai.triage.cursor"

// Task is what triage asks of each incident and alert.
const Task = "Give a short assessment: likely cause, whether it looks benign or malicious, what to check first."

// Actor is who triage's conversations and audit records name.
func Actor() store.AuditActor { return store.AuditActor{Username: "ai-triage", ActorType: "system"} }

// Defaults of Deps.
const (
	DefaultTick        = 15 * time.Second
	DefaultMaxAge      = time.Hour
	DefaultCallTimeout = 5 * time.Minute
	// DefaultMaxPerHour is the cap of a config without one (max_per_hour 0).
	DefaultMaxPerHour = 10
)

// window is the span of max_per_hour.
const window = time.Hour

// batch bounds the rows of each kind one round reads; rounds bounds a
// pass's rounds (a storm is worked through over several ticks).
const (
	batch  = 200
	rounds = 5
)

// Store is what triage needs of the database (*store.DB).
type Store interface {
	InTx(ctx context.Context, fn func(*store.Tx) error) error
	GetSetting(ctx context.Context, key string) (string, error)
	TriageIncidents(ctx context.Context, after int64, minSeverity, limit int) ([]record.Incident, error)
	TriageAlertEvents(ctx context.Context, after int64, minSeverity, limit int) ([]record.AlertEvent, error)
	TriageHighWater(ctx context.Context) (incident, alert int64, err error)
}

// Conversations says whether an object already has a conversation of a
// source (the ai service's store): triage does not assess an incident or
// alert twice.
type Conversations interface {
	HasAIConversation(ctx context.Context, scopeKind, scopeRef, source string) (bool, error)
}

// Deps are triage's collaborators.
type Deps struct {
	DB      Store
	Analyst ai.Analyst
	// Conversations, when set, is asked before each assessment; nil: the
	// cursor alone keeps an item from being assessed twice.
	Conversations Conversations
	Registerer    prometheus.Registerer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// IsLeader says whether this hub runs triage (the leader when several
	// hubs share a database); nil: always. The cursor's compare-and-swap
	// keeps an item from being assessed twice either way.
	IsLeader func() bool
	// Tick is the time between passes (default 15 s).
	Tick time.Duration
	// MaxAge: an item older than this when read is passed over (counted
	// as skipped, stale), so turning triage back on after weeks does not
	// assess weeks of history (default one hour).
	MaxAge time.Duration
	// CallTimeout bounds one assessment (default 5 minutes).
	CallTimeout time.Duration
}

// Triage assesses new incidents and alerts. Build it with New.
type Triage struct {
	log   *slog.Logger
	cfg   ai.TriageConfig
	deps  Deps
	m     *triageMetrics
	guard *panics.Guard

	loop loop
}

// New builds triage; it does no work until Start. A MaxPerHour of 0 or
// less is DefaultMaxPerHour; a negative MinSeverity is 0.
func New(log *slog.Logger, cfg ai.TriageConfig, deps Deps) *Triage {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxPerHour <= 0 {
		cfg.MaxPerHour = DefaultMaxPerHour
	}
	cfg.MinSeverity = max(cfg.MinSeverity, 0)
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Tick <= 0 {
		deps.Tick = DefaultTick
	}
	if deps.MaxAge <= 0 {
		deps.MaxAge = DefaultMaxAge
	}
	if deps.CallTimeout <= 0 {
		deps.CallTimeout = DefaultCallTimeout
	}
	return &Triage{log: log.With("component", "ai_triage"), cfg: cfg, deps: deps,
		m: newTriageMetrics(deps.Registerer), guard: panics.New(deps.Registerer, log, "ai_triage")}
}

// Start runs a pass now and then every Tick, until Stop; with triage
// disabled it does nothing. A panic in a pass is recovered, logged and
// counted (netmon_panics_total{component="ai_triage"}) and the loop goes
// on.
func (t *Triage) Start() error {
	if !t.cfg.Enabled {
		return nil
	}
	if t.deps.DB == nil || t.deps.Analyst == nil {
		return errors.New("start ai triage: no store or no analyst")
	}
	if err := t.loop.start(t.guard, t.deps.Tick, func(ctx context.Context) {
		if err := t.RunOnce(ctx); err != nil && ctx.Err() == nil {
			t.log.Warn("ai triage pass failed", "err", err)
		}
	}); err != nil {
		return fmt.Errorf("start ai triage: %w", err)
	}
	t.log.Info("ai triage started", "min_severity", t.cfg.MinSeverity, "max_per_hour", t.cfg.MaxPerHour, "tick", t.deps.Tick)
	return nil
}

// Stop ends the loop and waits for a pass in progress; its assessment is
// cancelled (the item stays claimed: it is not retried).
func (t *Triage) Stop() error {
	t.loop.halt()
	return nil
}

// cursor is the document under CursorKey.
type cursor struct {
	Incident int64 `json:"incident"`
	Alert    int64 `json:"alert"`
	// Recent are the instants (Unix s) of the assessments of the last
	// hour, oldest first: never more than max_per_hour.
	Recent []int64 `json:"recent"`
}

// item is one incident or alert event to triage.
type item struct {
	scope string // ai.ScopeIncident or ai.ScopeAnomaly
	id    int64
	ts    int64 // when it was opened or fired
}

// errMoved is a lost compare-and-swap: another hub (or run) moved the
// cursor; the round starts again from the stored one.
var errMoved = errors.New("the triage cursor moved")

// RunOnce is one pass: unless this hub is not the leader (or triage is
// disabled), it triages every incident and alert created after the
// cursor, incidents first, in id order. On the first pass ever it only
// sets the cursor to the newest ids (history is not assessed).
func (t *Triage) RunOnce(ctx context.Context) error {
	if !t.cfg.Enabled || (t.deps.IsLeader != nil && !t.deps.IsLeader()) {
		return nil
	}
	for range rounds {
		cur, raw, err := t.load(ctx)
		if err != nil {
			return err
		}
		if raw == nil {
			if err := t.initCursor(ctx); err != nil {
				return err
			}
			continue
		}
		incs, err := t.deps.DB.TriageIncidents(ctx, cur.Incident, t.cfg.MinSeverity, batch)
		if err != nil {
			return err
		}
		als, err := t.deps.DB.TriageAlertEvents(ctx, cur.Alert, t.cfg.MinSeverity, batch)
		if err != nil {
			return err
		}
		items := make([]item, 0, len(incs)+len(als))
		for _, i := range incs {
			items = append(items, item{scope: ai.ScopeIncident, id: i.ID, ts: i.OpenedTS})
		}
		for _, e := range als {
			items = append(items, item{scope: ai.ScopeAnomaly, id: e.ID, ts: e.TS})
		}
		if len(items) == 0 {
			return nil
		}
		err = t.handle(ctx, cur, *raw, items)
		if errors.Is(err, errMoved) {
			continue
		}
		if err != nil {
			return err
		}
		if len(incs) < batch && len(als) < batch {
			return nil
		}
	}
	return nil
}

// handle triages items from cur (stored as raw). Each assessment is
// claimed first: the cursor past its item, with its instant in Recent,
// is swapped in, and only then is Analyze called, so of two hubs only
// one assesses an item, and a crash loses an assessment rather than
// repeating it. Items passed over (dropped, stale, already assessed)
// ride along with the next swap.
func (t *Triage) handle(ctx context.Context, cur cursor, raw string, items []item) error {
	var dropped int
	skipped := map[string]int{}
	dirty := false
	commit := func(next cursor) error {
		doc, err := json.Marshal(next)
		if err != nil {
			return fmt.Errorf("ai triage cursor: %w", err)
		}
		err = t.deps.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SwapSetting(ctx, CursorKey, &raw, string(doc)) })
		if errors.Is(err, store.ErrConflict) {
			return errMoved
		}
		if err != nil {
			return fmt.Errorf("ai triage cursor: %w", err)
		}
		raw, dirty = string(doc), false
		// Counted once stored: a lost swap means another hub saw them.
		t.m.dropped.Add(float64(dropped))
		for r, n := range skipped {
			t.m.skipped.WithLabelValues(r).Add(float64(n))
		}
		dropped, skipped = 0, map[string]int{}
		return nil
	}
	for _, it := range items {
		now := t.deps.Now()
		cur.Recent = recent(cur.Recent, now)
		next := cur
		if it.scope == ai.ScopeIncident {
			next.Incident = it.id
		} else {
			next.Alert = it.id
		}
		switch {
		case it.ts < now.Add(-t.deps.MaxAge).Unix():
			skipped[skipStale]++
		case len(cur.Recent) >= t.cfg.MaxPerHour:
			dropped++
			t.log.Debug("ai triage dropped (max_per_hour)", "scope", it.scope, "id", it.id)
		default:
			done, err := t.assessed(ctx, it)
			if err != nil {
				return err
			}
			if done {
				skipped[skipAssessed]++
				break
			}
			next.Recent = append(append([]int64(nil), cur.Recent...), now.Unix())
			if err := commit(next); err != nil {
				return err
			}
			cur = next
			t.assess(ctx, it)
			continue
		}
		cur, dirty = next, true
	}
	if dirty {
		return commit(cur)
	}
	return nil
}

// recent keeps the instants of rs within the window before now.
func recent(rs []int64, now time.Time) []int64 {
	from := now.Add(-window).Unix()
	i := 0
	for i < len(rs) && rs[i] <= from {
		i++
	}
	return rs[i:]
}

// assessed asks Conversations whether it already has a triage
// conversation.
func (t *Triage) assessed(ctx context.Context, it item) (bool, error) {
	if t.deps.Conversations == nil {
		return false, nil
	}
	ok, err := t.deps.Conversations.HasAIConversation(ctx, it.scope, strconv.FormatInt(it.id, 10), ai.SourceTriage)
	if err != nil {
		return false, fmt.Errorf("ai triage: %s %d: %w", it.scope, it.id, err)
	}
	return ok, nil
}

// assess runs one claimed assessment; its failure (or panic) is logged
// and counted, never returned: the item is not retried.
func (t *Triage) assess(ctx context.Context, it item) {
	ctx, cancel := context.WithTimeout(ctx, t.deps.CallTimeout)
	defer cancel()
	scope := ai.Scope{Kind: it.scope, Ref: strconv.FormatInt(it.id, 10)}
	var (
		a   ai.Analysis
		err error
	)
	if perr := t.guard.Do(func() { a, err = t.deps.Analyst.Analyze(ctx, Actor(), scope, ai.SourceTriage, Task) }); perr != nil {
		err = perr
	}
	if err != nil {
		t.m.errors.WithLabelValues(it.scope).Inc()
		t.log.Warn("ai triage assessment failed", "scope", it.scope, "id", it.id, "err", err)
		return
	}
	t.m.assessed.WithLabelValues(it.scope).Inc()
	t.log.Info("ai triage assessment written", "scope", it.scope, "id", it.id, "conversation", a.ConversationID, "model", a.Model)
}

// load reads the cursor; raw is nil when there is none yet.
func (t *Triage) load(ctx context.Context) (cursor, *string, error) {
	v, err := t.deps.DB.GetSetting(ctx, CursorKey)
	if errors.Is(err, store.ErrNotFound) {
		return cursor{}, nil, nil
	}
	if err != nil {
		return cursor{}, nil, fmt.Errorf("ai triage cursor: %w", err)
	}
	var c cursor
	if err := json.Unmarshal([]byte(v), &c); err != nil {
		// A damaged document is replaced at once by the newest ids (stored
		// now, or the next pass would read newer ones and skip what came
		// in between).
		t.log.Warn("ai triage cursor unreadable, starting from the newest ids", "err", err)
		inc, al, herr := t.deps.DB.TriageHighWater(ctx)
		if herr != nil {
			return cursor{}, nil, herr
		}
		c = cursor{Incident: inc, Alert: al, Recent: []int64{}}
		doc, merr := json.Marshal(c)
		if merr != nil {
			return cursor{}, nil, merr
		}
		err = t.deps.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SwapSetting(ctx, CursorKey, &v, string(doc)) })
		if errors.Is(err, store.ErrConflict) {
			return t.load(ctx) // another hub repaired or moved it
		}
		if err != nil {
			return cursor{}, nil, fmt.Errorf("ai triage cursor: %w", err)
		}
		v = string(doc)
	}
	return c, &v, nil
}

// initCursor stores the first cursor: the newest ids. Of two hubs
// starting at once, the second's swap fails and it reads the first's.
func (t *Triage) initCursor(ctx context.Context) error {
	inc, al, err := t.deps.DB.TriageHighWater(ctx)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(cursor{Incident: inc, Alert: al, Recent: []int64{}})
	if err != nil {
		return err
	}
	err = t.deps.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SwapSetting(ctx, CursorKey, nil, string(doc)) })
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("ai triage cursor: %w", err)
	}
	if err == nil {
		t.log.Info("ai triage cursor set: history is not assessed", "incident", inc, "alert", al)
	}
	return nil
}
