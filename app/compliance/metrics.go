package compliance

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	records     *prometheus.CounterVec
	dropped     prometheus.Counter
	checkpoints *prometheus.CounterVec
	stamps      *prometheus.CounterVec
	wormErrors  prometheus.Counter
	writeErrors prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_compliance_records_total", Help: "Records appended to the compliance log, by kind.",
		}, []string{"kind"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netmon_compliance_dropped_total", Help: "Records not appended because the compliance queue was full.",
		}),
		checkpoints: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_compliance_checkpoints_total", Help: "Signed statements made, by kind (hourly, daily).",
		}, []string{"kind"}),
		stamps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_compliance_tsa_requests_total", Help: "RFC 3161 stamp attempts, by result (ok, error).",
		}, []string{"result"}),
		wormErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netmon_compliance_worm_errors_total", Help: "Failed writes to the WORM directory (existing file, read-only or full directory).",
		}),
		writeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netmon_compliance_write_errors_total", Help: "Failed writes of compliance records or statements to the database.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.records, m.dropped, m.checkpoints, m.stamps, m.wormErrors, m.writeErrors)
	}
	return m
}
