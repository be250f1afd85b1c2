package snmp

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// metrics: polls by result, their duration, SNMP requests and varbinds
// (GETs/s and varbinds/s of the scale run), devices scheduled.
type metrics struct {
	polls    *prometheus.CounterVec // result: ok, error
	duration prometheus.Histogram
	requests prometheus.Counter
	varbinds prometheus.Counter
	devices  prometheus.Gauge
	late     prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_snmp_polls_total",
			Help: "Device polls by result (ok, error)."}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "netmon_snmp_poll_duration_seconds",
			Help: "Time one poll of one device took.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}),
		requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_snmp_requests_total", Help: "SNMP request PDUs sent (GET, GETNEXT, GETBULK)."}),
		varbinds: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_snmp_varbinds_total", Help: "Values received from devices."}),
		devices:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "netmon_snmp_devices", Help: "Devices scheduled for polling."}),
		late: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_snmp_polls_late_total",
			Help: "Polls that started more than one interval after they were due (the poller is behind)."}),
	}
	m.polls.WithLabelValues("ok")
	m.polls.WithLabelValues("error")
	if reg != nil {
		reg.MustRegister(m.polls, m.duration, m.requests, m.varbinds, m.devices, m.late)
	}
	return m
}

// readCounter reads a counter's value (benchmarks report from it).
func readCounter(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}
