package devices

import "github.com/prometheus/client_golang/prometheus"

// metrics of the schedule, one series per driver (label driver: snmp,
// fwrest): polls by result, their duration, devices scheduled, polls
// that started late. The drivers' own wire metrics
// (netmon_snmp_requests_total, netmon_fwrest_requests_total, ...) are
// theirs.
type metrics struct {
	polls    *prometheus.CounterVec // driver, result: ok, error
	duration *prometheus.HistogramVec
	devices  *prometheus.GaugeVec
	late     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, drivers []Driver) *metrics {
	m := &metrics{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_device_polls_total",
			Help: "Device polls by driver and result (ok, error)."}, []string{"driver", "result"}),
		// An SNMP poll takes milliseconds to seconds; a REST poll is 7
		// requests at least 150 ms apart, up to 10 s a request.
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "netmon_device_poll_duration_seconds",
			Help: "Time one poll of one device took, by driver.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 16)}, []string{"driver"}),
		devices: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "netmon_devices",
			Help: "Devices scheduled for polling, by driver."}, []string{"driver"}),
		late: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_device_polls_late_total",
			Help: "Polls that started more than one interval after they were due (the poller is behind), by driver."}, []string{"driver"}),
	}
	for _, d := range drivers {
		m.polls.WithLabelValues(d.Name(), "ok")
		m.polls.WithLabelValues(d.Name(), "error")
		m.devices.WithLabelValues(d.Name())
		m.late.WithLabelValues(d.Name())
	}
	if reg != nil {
		reg.MustRegister(m.polls, m.duration, m.devices, m.late)
	}
	return m
}
