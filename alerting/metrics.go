package alerting

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	fired      *prometheus.CounterVec
	evalTime   *prometheus.HistogramVec
	errors     prometheus.Counter
	tickDrops  prometheus.Counter
	openEvents prometheus.GaugeFunc
	shed       *prometheus.CounterVec
	panics     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, open func() float64) *metrics {
	m := &metrics{
		fired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_alerting_conditions_total",
			Help: "Alert conditions raised by the rules, by kind and outcome (stored, repeat, cooldown, silenced, disabled, error, shed).",
		}, []string{"kind", "outcome"}),
		evalTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "netmon_alerting_eval_seconds",
			Help:    "Time to evaluate one cycle of rules, by cadence (snapshot, inventory, ioc, anomaly).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 8),
		}, []string{"cadence"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netmon_alerting_errors_total",
			Help: "Failures reading rule inputs or writing alert events.",
		}),
		tickDrops: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netmon_alerting_tick_dropped_total",
			Help: "New alert events dropped from the WebSocket tick buffer because it was full (they are stored all the same).",
		}),
		openEvents: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "netmon_alerting_open_events",
			Help: "Alert events firing or acknowledged.",
		}, open),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_alerting_shed_total",
			Help: "Raised conditions a bounded cycle had no room for, by kind and reason (cycle_cap, cycle_budget); the lowest severities go first.",
		}, []string{"kind", "reason"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_alerting_panics_total",
			Help: "Evaluations that panicked, by loop (snapshot, inventory, ioc, anomaly); the loop goes on.",
		}, []string{"loop"}),
	}
	if reg != nil {
		reg.MustRegister(m.fired, m.evalTime, m.errors, m.tickDrops, m.openEvents, m.shed, m.panics)
	}
	return m
}
