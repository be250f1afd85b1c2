package geo

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics of the GeoIP component. The lookup counters are resolved once
// so that Lookup, on the capture hot path, does no label hashing.
type metrics struct {
	lookups      *prometheus.CounterVec
	batches      *prometheus.CounterVec
	reloads      *prometheus.CounterVec
	queueDropped prometheus.Counter
	queueLength  prometheus.Gauge
	cacheEntries prometheus.Gauge
	databases    prometheus.Gauge

	lookupFound, lookupNotFound, lookupPending, lookupDropped,
	lookupPrivate, lookupNoSource, lookupError prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "geo", Name: "lookups_total",
			Help: "GeoIP lookups by result: found, not_found, pending (queued for the online batch), dropped (online queue full), private (non-global address, not looked up), no_source, error (a database failed to decode; counted besides the result).",
		}, []string{"result"}),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "geo", Name: "online_batches_total",
			Help: "Online lookup requests by result: ok, rate_limited (HTTP 429), error.",
		}, []string{"result"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "geo", Name: "database_loads_total",
			Help: "Database file loads by result: ok, error (the previous version, if any, is kept).",
		}, []string{"result"}),
		queueDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "geo", Name: "online_queue_dropped_total",
			Help: "Addresses not queued for the online lookup because the queue was full (asked again when next seen).",
		}),
		queueLength: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "netmon", Subsystem: "geo", Name: "online_queue_length",
			Help: "Addresses waiting for the online lookup.",
		}),
		cacheEntries: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "netmon", Subsystem: "geo", Name: "online_cache_entries",
			Help: "Online answers cached, negative ones included.",
		}),
		databases: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "netmon", Subsystem: "geo", Name: "databases",
			Help: "GeoIP database files loaded.",
		}),
	}
	if reg != nil {
		m.lookups = register(reg, m.lookups)
		m.batches = register(reg, m.batches)
		m.reloads = register(reg, m.reloads)
		m.queueDropped = register(reg, m.queueDropped)
		m.queueLength = register(reg, m.queueLength)
		m.cacheEntries = register(reg, m.cacheEntries)
		m.databases = register(reg, m.databases)
	}
	m.lookupFound = m.lookups.WithLabelValues("found")
	m.lookupNotFound = m.lookups.WithLabelValues("not_found")
	m.lookupPending = m.lookups.WithLabelValues("pending")
	m.lookupDropped = m.lookups.WithLabelValues("dropped")
	m.lookupPrivate = m.lookups.WithLabelValues("private")
	m.lookupNoSource = m.lookups.WithLabelValues("no_source")
	m.lookupError = m.lookups.WithLabelValues("error")
	for _, r := range []string{"ok", "rate_limited", "error"} {
		m.batches.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "error"} {
		m.reloads.WithLabelValues(r)
	}
	return m
}

// register registers c on reg, or returns the collector already
// registered under the same name (a second Geo on one registry).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err) // a programming error: two metrics of the same name and different shape
	}
	return c
}
