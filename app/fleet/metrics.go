package fleet

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	hellos    *prometheus.CounterVec // result
	batches   *prometheus.CounterVec // result
	archived  prometheus.Counter
	agentDrop prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		hellos: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_agent_hellos_total",
			Help: "Agent enrollment attempts, by result (ok, unauthorized, forbidden, exhausted, throttled, invalid).",
		}, []string{"result"}),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_agent_telemetry_batches_total",
			Help: "Agent telemetry batches, by result (queued, duplicate, queue_full, unauthorized, invalid).",
		}, []string{"result"}),
		archived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netmon_agents_archived_total",
			Help: "Agents deleted by the archive after -agent-archive-days offline.",
		}),
		agentDrop: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netmon_agent_spool_dropped_total",
			Help: "Telemetry batches agents reported discarding from their full offline queue.",
		}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.hellos, m.batches, m.archived, m.agentDrop} {
			_ = reg.Register(c)
		}
	}
	return m
}
