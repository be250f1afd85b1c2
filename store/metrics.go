package store

import "github.com/prometheus/client_golang/prometheus"

// retentionMetrics are the Retention component's metrics.
type retentionMetrics struct {
	deletedRows *prometheus.CounterVec
	errors      *prometheus.CounterVec
	droppedDays *prometheus.CounterVec
	lastRun     prometheus.Gauge
	runDuration prometheus.Histogram
}

func newRetentionMetrics(reg prometheus.Registerer) *retentionMetrics {
	m := &retentionMetrics{
		deletedRows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "retention", Name: "deleted_rows_total",
			Help: "Rows deleted by the retention purge, by table.",
		}, []string{"table"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "retention", Name: "errors_total",
			Help: "Retention purges of a table that failed, by table.",
		}, []string{"table"}),
		droppedDays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "retention", Name: "dropped_days_total",
			Help: "Whole expired days dropped (a table or partition each) from the tables stored by day, by table.",
		}, []string{"table"}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "netmon", Subsystem: "retention", Name: "last_run_timestamp_seconds",
			Help: "Unix time at which the last retention run finished.",
		}),
		runDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "netmon", Subsystem: "retention", Name: "run_duration_seconds",
			Help:    "Duration of retention runs over all registered tables.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900},
		}),
	}
	if reg != nil {
		reg.MustRegister(m.deletedRows, m.errors, m.droppedDays, m.lastRun, m.runDuration)
	}
	return m
}
