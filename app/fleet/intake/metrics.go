package intake

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// MaxTrafficSeries caps the (agent, interface) pairs of the traffic
// metrics; beyond it traffic is counted under agent="other",
// interface="other", so a large fleet cannot blow up a Prometheus server.
const MaxTrafficSeries = 2000

type metrics struct {
	batches   *prometheus.CounterVec // result
	agentDrop prometheus.Counter
	// ifBytes and ifPackets: agent, interface, direction (rx, tx).
	ifBytes, ifPackets *prometheus.CounterVec
	seriesMu           sync.Mutex
	series             map[[2]string]bool
}

// traffic adds one interface's counter deltas of an agent.
func (m *metrics) traffic(agent, iface string, rxBytes, txBytes, rxPackets, txPackets uint64) {
	m.seriesMu.Lock()
	k := [2]string{agent, iface}
	if !m.series[k] {
		if len(m.series) < MaxTrafficSeries {
			m.series[k] = true
		} else {
			agent, iface = "other", "other"
		}
	}
	m.seriesMu.Unlock()
	m.ifBytes.WithLabelValues(agent, iface, "rx").Add(float64(rxBytes))
	m.ifBytes.WithLabelValues(agent, iface, "tx").Add(float64(txBytes))
	m.ifPackets.WithLabelValues(agent, iface, "rx").Add(float64(rxPackets))
	m.ifPackets.WithLabelValues(agent, iface, "tx").Add(float64(txPackets))
}

func newMetrics() *metrics {
	return &metrics{
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_agent_telemetry_batches_total",
			Help: "Agent telemetry batches, by result (queued, duplicate, queue_full, unauthorized, invalid).",
		}, []string{"result"}),
		agentDrop: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "netmon_agent_spool_dropped_total",
			Help: "Telemetry batches agents reported discarding from their full offline queue.",
		}),
		ifBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_agent_interface_bytes_total",
			Help: "Bytes through agents' interfaces, from their cumulative counters (resets and 32-bit wraps handled), by agent name, interface and direction (rx, tx); at most 2000 agent-interface pairs, the rest under agent=\"other\".",
		}, []string{"agent", "interface", "direction"}),
		ifPackets: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_agent_interface_packets_total",
			Help: "Packets through agents' interfaces, as netmon_agent_interface_bytes_total.",
		}, []string{"agent", "interface", "direction"}),
		series: map[[2]string]bool{},
	}
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.batches, m.agentDrop, m.ifBytes, m.ifPackets}
}
