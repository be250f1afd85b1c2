package triage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/ai"
	"netmon/app/panics"
	"netmon/store"
)

// SlotKey is the settings key of the last nightly slot claimed (its
// instant, Unix seconds, in decimal).
const SlotKey = "ai.nightly.slot"

// NightlyActor is who the summaries' conversations and audit records name.
func NightlyActor() store.AuditActor {
	return store.AuditActor{Username: "ai-nightly", ActorType: "system"}
}

// Defaults of NightlyDeps.
const (
	DefaultNightlyTick    = 30 * time.Second
	DefaultNightlyTimeout = 10 * time.Minute
)

// NightlyStore is what the summary needs of the database (*store.DB).
type NightlyStore interface {
	InTx(ctx context.Context, fn func(*store.Tx) error) error
	GetSetting(ctx context.Context, key string) (string, error)
}

// Mailer mails through the alert e-mail channel's server
// (*notify.Notifier, as the report schedules). Its errors are
// classified texts, logged as they are.
type Mailer interface {
	SendReport(ctx context.Context, to []string, subject, body, filename, contentType string, data []byte) error
}

// NightlyDeps are the summary's collaborators.
type NightlyDeps struct {
	DB      NightlyStore
	Analyst ai.Analyst
	// Mailer sends the summary to the recipients; nil: a summary with
	// recipients is stored, its mail fails ("e-mail not configured").
	Mailer     Mailer
	Registerer prometheus.Registerer
	// Location is the zone of daily and weekly specs (the hub's report
	// zone); nil is UTC.
	Location *time.Location
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// IsLeader says whether this hub runs the summary; nil: always. The
	// slot claim keeps a slot from running twice either way.
	IsLeader func() bool
	// Tick is how often the spec is checked (default 30 s); Timeout
	// bounds a run, summary and mail (default 10 minutes).
	Tick    time.Duration
	Timeout time.Duration
}

// Nightly writes the daily/weekly summary. Build it with NewNightly.
type Nightly struct {
	log     *slog.Logger
	cfg     ai.NightlyConfig
	deps    NightlyDeps
	spec    Spec
	specErr error
	m       *nightlyMetrics
	guard   *panics.Guard

	loop loop
}

// NewNightly builds the summary job; it does no work until Start. A bad
// spec is Start's error (ParseSpec's text).
func NewNightly(log *slog.Logger, cfg ai.NightlyConfig, deps NightlyDeps) *Nightly {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Location == nil {
		deps.Location = time.UTC
	}
	if deps.Tick <= 0 {
		deps.Tick = DefaultNightlyTick
	}
	if deps.Timeout <= 0 {
		deps.Timeout = DefaultNightlyTimeout
	}
	sp, err := ParseSpec(cfg.Spec)
	return &Nightly{log: log.With("component", "ai_nightly"), cfg: cfg, deps: deps, spec: sp, specErr: err,
		m: newNightlyMetrics(deps.Registerer), guard: panics.New(deps.Registerer, log, "ai_nightly")}
}

// Start checks the spec now and then every Tick, until Stop; disabled,
// it does nothing. A bad spec is an error and nothing runs.
func (n *Nightly) Start() error {
	if !n.cfg.Enabled {
		return nil
	}
	if n.specErr != nil {
		return fmt.Errorf("start ai nightly summary: %w", n.specErr)
	}
	if n.deps.DB == nil || n.deps.Analyst == nil {
		return errors.New("start ai nightly summary: no store or no analyst")
	}
	if err := n.loop.start(n.guard, n.deps.Tick, func(ctx context.Context) {
		if _, err := n.RunOnce(ctx); err != nil && ctx.Err() == nil {
			n.log.Warn("ai nightly summary check failed", "err", err)
		}
	}); err != nil {
		return fmt.Errorf("start ai nightly summary: %w", err)
	}
	n.log.Info("ai nightly summary started", "spec", n.spec.String(), "zone", n.deps.Location.String(),
		"recipients", len(n.cfg.Recipients), "next", n.spec.Next(n.deps.Now(), n.deps.Location))
	return nil
}

// Stop ends the loop and waits for a run in progress, cancelling it (its
// slot stays claimed: it is not retried).
func (n *Nightly) Stop() error {
	n.loop.halt()
	return nil
}

// RunOnce runs the latest slot at or before now when it is after the
// last one claimed and this hub is the leader, and says whether it ran
// it. Only the latest slot counts: after downtime the missed ones are
// caught up by one run. The very first check only records the latest
// slot (turning the summary on does not run one at once). A claimed
// slot is not retried, even when its summary fails: "never twice" wins
// over "at least once".
func (n *Nightly) RunOnce(ctx context.Context) (bool, error) {
	if !n.cfg.Enabled || n.specErr != nil || (n.deps.IsLeader != nil && !n.deps.IsLeader()) {
		return false, nil
	}
	now := n.deps.Now()
	slot := n.spec.Prev(now, n.deps.Location)
	if slot.IsZero() {
		return false, nil
	}
	var old *string
	v, err := n.deps.DB.GetSetting(ctx, SlotKey)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return false, fmt.Errorf("ai nightly slot: %w", err)
	default:
		old = &v
		if last, perr := strconv.ParseInt(v, 10, 64); perr == nil && last >= slot.Unix() {
			return false, nil
		}
	}
	claim := strconv.FormatInt(slot.Unix(), 10)
	err = n.deps.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SwapSetting(ctx, SlotKey, old, claim) })
	if errors.Is(err, store.ErrConflict) {
		n.m.runs.WithLabelValues(outcomeClaimed).Inc()
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ai nightly slot: %w", err)
	}
	if old == nil {
		n.log.Info("ai nightly summary: first check, the next slot runs", "slot", slot, "next", n.spec.Next(now, n.deps.Location))
		return false, nil
	}
	n.run(ctx, slot)
	return true, nil
}

// run writes the summary of slot and mails it; failures are logged and
// counted.
func (n *Nightly) run(ctx context.Context, slot time.Time) {
	ctx, cancel := context.WithTimeout(ctx, n.deps.Timeout)
	defer cancel()
	var (
		a   ai.Analysis
		err error
	)
	task := SummaryTask(n.spec)
	if perr := n.guard.Do(func() {
		a, err = n.deps.Analyst.Analyze(ctx, NightlyActor(), ai.Scope{Kind: ai.ScopeFleet}, ai.SourceNightly, task)
	}); perr != nil {
		err = perr
	}
	if err != nil {
		n.m.runs.WithLabelValues(outcomeFailed).Inc()
		n.log.Warn("ai nightly summary failed", "slot", slot, "err", err)
		return
	}
	n.m.runs.WithLabelValues(outcomeOK).Inc()
	n.m.lastRun.Set(float64(slot.Unix()))
	n.log.Info("ai nightly summary written", "slot", slot, "conversation", a.ConversationID, "model", a.Model)
	if len(n.cfg.Recipients) == 0 {
		return
	}
	err = errors.New("e-mail not configured")
	if n.deps.Mailer != nil {
		local := slot.In(n.deps.Location)
		err = n.deps.Mailer.SendReport(ctx, n.cfg.Recipients, mailSubject(n.spec, local), mailBody(n.spec, local, a),
			"netmon-ai-summary-"+local.Format("20060102-1504")+".txt", "text/plain; charset=utf-8", []byte(a.Text))
	}
	if err != nil {
		n.m.mails.WithLabelValues(mailFailed).Inc()
		n.log.Warn("ai nightly summary not mailed", "slot", slot, "recipients", len(n.cfg.Recipients), "err", err)
		return
	}
	n.m.mails.WithLabelValues(mailSent).Inc()
}

// SummaryTask is what the summary asks, by the period of sp.
func SummaryTask(sp Spec) string {
	return "Summarise " + periodText(sp) + " on this network for the operators: the incidents and alerts that matter " +
		"(grouped, most serious first), agents or devices that went offline or changed, unusual traffic, and what to check first. " +
		"Keep it short; say so when nothing stands out."
}

// periodText is the span a summary covers, in words.
func periodText(sp Spec) string {
	switch sp.Kind() {
	case SpecWeekly:
		return "the last 7 days"
	case SpecInterval:
		d := sp.Period()
		if d%time.Hour == 0 {
			if d == time.Hour {
				return "the last hour"
			}
			return fmt.Sprintf("the last %d hours", int(d/time.Hour))
		}
		if d == time.Minute {
			return "the last minute"
		}
		return fmt.Sprintf("the last %d minutes", int(d/time.Minute))
	}
	return "the last 24 hours"
}

// summaryName is "daily", "weekly" or "periodic".
func summaryName(sp Spec) string {
	if sp.Kind() == SpecInterval {
		return "periodic"
	}
	return sp.Kind()
}

func mailSubject(sp Spec, local time.Time) string {
	return fmt.Sprintf("[netmon] AI %s summary, %s", summaryName(sp), local.Format("2006-01-02 15:04 MST"))
}

// mailBody is the summary with what it is: advisory, by which model,
// where the conversation is.
func mailBody(sp Spec, local time.Time, a ai.Analysis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The AI %s summary of %s up to %s (spec %s).\n", summaryName(sp), periodText(sp), local.Format("2006-01-02 15:04 MST"), sp.String())
	fmt.Fprintf(&b, "Advisory only, written by %s %s; conversation %d in the AI tab.\n\n", a.Provider, a.Model, a.ConversationID)
	b.WriteString(a.Text)
	if !strings.HasSuffix(a.Text, "\n") {
		b.WriteString("\n")
	}
	return b.String()
}
