package httpguard

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	closed *prometheus.CounterVec
}

func newMetrics(g *Guard, reg prometheus.Registerer) *metrics {
	m := &metrics{
		closed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_http_connections_closed_total",
			Help: "HTTP connections the hub closed early, by reason: evicted_per_source / evicted_total (at a cap, to make room for a new connection; the one that had waited longest without delivering a request), refused_per_source / refused_total (at a cap with nothing evictable), body_timeout (request body not received in time), incomplete_request (closed by the header or idle deadline before any request arrived, or mid-request).",
		}, []string{"reason"}),
	}
	for _, r := range []string{"evicted_per_source", "evicted_total", "refused_per_source", "refused_total", "body_timeout", "incomplete_request"} {
		m.closed.WithLabelValues(r)
	}
	open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "netmon_http_connections_open",
		Help: "HTTP connections open now (WebSockets included).",
	}, func() float64 {
		g.mu.Lock()
		defer g.mu.Unlock()
		return float64(g.total)
	})
	limits := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "netmon_http_connections_limit",
		Help: "Caps on open HTTP connections (total, per_source) and the process's open file limit (open_files) they derive from.",
	}, []string{"kind"})
	limits.WithLabelValues("total").Set(float64(g.cfg.MaxConns))
	limits.WithLabelValues("per_source").Set(float64(g.cfg.MaxConnsPerSource))
	limits.WithLabelValues("open_files").Set(float64(g.limit))
	if reg != nil {
		for _, c := range []prometheus.Collector{m.closed, open, limits} {
			_ = reg.Register(c)
		}
	}
	return m
}
