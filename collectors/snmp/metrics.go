package snmp

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics of the SNMP wire: request PDUs and varbinds (GETs/s and
// varbinds/s of the scale run). Polls, their duration and the devices
// scheduled are the device component's, labelled driver="snmp".
type metrics struct {
	requests prometheus.Counter
	varbinds prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_snmp_requests_total", Help: "SNMP request PDUs sent (GET, GETNEXT, GETBULK)."}),
		varbinds: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_snmp_varbinds_total", Help: "Values received from devices."}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.varbinds)
	}
	return m
}
