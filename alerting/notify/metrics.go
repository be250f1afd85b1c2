package notify

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	routed     *prometheus.CounterVec // by channel
	results    *prometheus.CounterVec // by channel and result: delivered, failed, retry
	dropped    *prometheus.CounterVec // by reason
	digested   *prometheus.CounterVec // by channel
	panics     *prometheus.CounterVec // by loop
	storeError prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		routed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_notify_routed_total",
			Help: "Deliveries routed to a channel (one per event and channel); routed = delivered + failed + pending."}, []string{"channel"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_notify_deliveries_total",
			Help: "Delivery attempts by channel and result: delivered, failed (given up or permanent), retry (will be tried again)."}, []string{"channel", "result"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_notify_dropped_total",
			Help: "Events never routed, by reason: fair_share (evicted from the source holding most of the full queue), source_share (the full queue's largest source's own event), store_error, group_queue, panic."}, []string{"reason"}),
		digested: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_notify_digested_total",
			Help: "Deliveries held back by a channel's rate limit per source and summed in that source's next digest, by channel."}, []string{"channel"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_notify_panics_total",
			Help: "Panics recovered in the notifier, by loop (intake, deliver, send); the loop goes on."}, []string{"loop"}),
		storeError: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_notify_store_errors_total",
			Help: "Failures to read or write the delivery queue."}),
	}
	if reg != nil {
		reg.MustRegister(m.routed, m.results, m.dropped, m.digested, m.panics, m.storeError)
	}
	return m
}
