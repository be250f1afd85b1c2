package triage

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics of triage and the nightly summary. Two components of the
// same kind on one registry (a restart in tests, two hubs in one
// process) share the series: register answers the collector already
// there.

// Reasons an item was passed over without an assessment (the label
// reason of netmon_ai_triage_skipped_total).
const (
	skipStale    = "stale"    // older than MaxAge when read (triage was off or behind)
	skipAssessed = "assessed" // it already has a triage conversation
)

// Outcomes of a nightly slot (netmon_ai_nightly_runs_total).
const (
	outcomeOK      = "ok"            // the summary was written
	outcomeFailed  = "failed"        // Analyze failed (or panicked)
	outcomeClaimed = "claimed_other" // another hub or run claimed the slot first
)

// Outcomes of the summary's mail (netmon_ai_nightly_mails_total).
const (
	mailSent   = "sent"
	mailFailed = "failed"
)

type triageMetrics struct {
	assessed *prometheus.CounterVec
	errors   *prometheus.CounterVec
	dropped  prometheus.Counter
	skipped  *prometheus.CounterVec
}

func newTriageMetrics(reg prometheus.Registerer) *triageMetrics {
	m := &triageMetrics{
		assessed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_ai_triage_assessed_total",
			Help: "Triage assessments written, by scope (incident, anomaly)."}, []string{"scope"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_ai_triage_errors_total",
			Help: "Triage assessments that failed (no ready provider, provider error, recovered panic), by scope; the item is not retried."}, []string{"scope"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_ai_triage_dropped_total",
			Help: "New incidents and alerts at or above min_severity not assessed because max_per_hour assessments were made in the last hour."}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_ai_triage_skipped_total",
			Help: "New incidents and alerts passed over, by reason (stale: older than an hour when read; assessed: already has a triage conversation)."}, []string{"reason"}),
	}
	m.assessed = register(reg, m.assessed)
	m.errors = register(reg, m.errors)
	m.dropped = register(reg, m.dropped)
	m.skipped = register(reg, m.skipped)
	return m
}

type nightlyMetrics struct {
	runs    *prometheus.CounterVec
	mails   *prometheus.CounterVec
	lastRun prometheus.Gauge
}

func newNightlyMetrics(reg prometheus.Registerer) *nightlyMetrics {
	m := &nightlyMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_ai_nightly_runs_total",
			Help: "Nightly AI summary slots handled by this hub, by outcome (ok, failed, claimed_other)."}, []string{"outcome"}),
		mails: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_ai_nightly_mails_total",
			Help: "Nightly AI summaries mailed to the recipients, by outcome (sent, failed)."}, []string{"outcome"}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{Name: "netmon_ai_nightly_last_success_timestamp_seconds",
			Help: "The slot (Unix seconds) of the last nightly AI summary this hub wrote."}),
	}
	m.runs = register(reg, m.runs)
	m.mails = register(reg, m.mails)
	m.lastRun = register(reg, m.lastRun)
	return m
}

// register registers c on reg (nil: not registered) and returns it, or
// the collector of the same description already registered.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if reg == nil {
		return c
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err) // a programming error, as MustRegister
	}
	return c
}
