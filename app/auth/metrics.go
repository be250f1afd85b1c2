package auth

import "github.com/prometheus/client_golang/prometheus"

// metrics are the auth service's Prometheus metrics.
type metrics struct {
	logins *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "netmon_auth_logins_total",
			Help: "Login attempts by result: ok, failed (wrong credentials) or throttled (refused before any check).",
		}, []string{"result"}),
	}
	for _, r := range []string{"ok", "failed", "throttled"} {
		m.logins.WithLabelValues(r) // export zeros, so rate() works from the start
	}
	if reg != nil {
		_ = reg.Register(m.logins)
	}
	return m
}
