package notify

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	routed     *prometheus.CounterVec // by channel
	results    *prometheus.CounterVec // by channel and result: delivered, failed, retry
	dropped    prometheus.Counter
	storeError prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		routed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_notify_routed_total",
			Help: "Deliveries routed to a channel (one per event and channel); routed = delivered + failed + pending."}, []string{"channel"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_notify_deliveries_total",
			Help: "Delivery attempts by channel and result: delivered, failed (given up or permanent), retry (will be tried again)."}, []string{"channel", "result"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_notify_dropped_total",
			Help: "Events the engine handed over while the notifier's queue was full (never routed)."}),
		storeError: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_notify_store_errors_total",
			Help: "Failures to read or write the delivery queue."}),
	}
	if reg != nil {
		reg.MustRegister(m.routed, m.results, m.dropped, m.storeError)
	}
	return m
}
