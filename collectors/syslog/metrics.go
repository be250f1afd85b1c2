package syslog

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons of netmon_syslog_rejected_total and netmon_syslog_dropped_total.
const (
	reasonEmpty     = "empty"
	reasonNoPRI     = "no_pri"
	reasonBadPRI    = "bad_pri"
	reasonOversize  = "oversize"
	reasonQueueFull = "queue_full"
)

// Reasons of netmon_syslog_altered_total.
const (
	reasonInvalidUTF8 = "invalid_utf8"
	reasonNUL         = "nul"
)

// metrics of the receiver. Conservation, once the workers are idle (and
// always after Stop): received = accepted + rejected + dropped.
type metrics struct {
	received prometheus.Counter
	accepted prometheus.Counter
	rejected *prometheus.CounterVec
	dropped  *prometheus.CounterVec

	altered *prometheus.CounterVec

	// resolved once: no label hashing per datagram
	rejEmpty, rejNoPRI, rejBadPRI, rejOversize, dropFull prometheus.Counter
	altUTF8, altNUL                                      prometheus.Counter
}

// newMetrics builds the counters and registers them on reg when it is not
// nil; kernelDrops backs netmon_syslog_kernel_drops_total.
func newMetrics(reg prometheus.Registerer, kernelDrops func() float64) *metrics {
	m := &metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "syslog", Name: "received_total",
			Help: "Syslog datagrams read from the socket.",
		}),
		accepted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "syslog", Name: "accepted_total",
			Help: "Syslog events handed to the ingest queue and taken by it.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "syslog", Name: "rejected_total",
			Help: "Syslog datagrams refused, by reason: empty, no_pri, bad_pri (above 191), oversize (longer than the maximum message).",
		}, []string{"reason"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "syslog", Name: "dropped_total",
			Help: "Parsed syslog events dropped, by reason: queue_full (the ingest queue refused the batch).",
		}, []string{"reason"}),
		altered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "netmon", Subsystem: "syslog", Name: "altered_total",
			Help: "Accepted syslog messages that held bytes a text column cannot store, by reason: invalid_utf8, nul. Such bytes become U+FFFD in host, tag and message, and the datagram is kept as received in the raw column. A message with both counts under both.",
		}, []string{"reason"}),
	}
	kernel := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: "netmon", Subsystem: "syslog", Name: "kernel_drops_total",
		Help: "Datagrams the kernel dropped because the socket buffer was full (the drops column of /proc/net/udp; 0 where unavailable).",
	}, kernelDrops)
	if reg != nil {
		m.received = register(reg, m.received)
		m.accepted = register(reg, m.accepted)
		m.rejected = register(reg, m.rejected)
		m.dropped = register(reg, m.dropped)
		m.altered = register(reg, m.altered)
		register(reg, kernel)
	}
	m.rejEmpty = m.rejected.WithLabelValues(reasonEmpty)
	m.rejNoPRI = m.rejected.WithLabelValues(reasonNoPRI)
	m.rejBadPRI = m.rejected.WithLabelValues(reasonBadPRI)
	m.rejOversize = m.rejected.WithLabelValues(reasonOversize)
	m.dropFull = m.dropped.WithLabelValues(reasonQueueFull)
	m.altUTF8 = m.altered.WithLabelValues(reasonInvalidUTF8)
	m.altNUL = m.altered.WithLabelValues(reasonNUL)
	return m
}

// reject counts a datagram Parse refused.
func (m *metrics) reject(err error) {
	switch {
	case errors.Is(err, ErrEmpty):
		m.rejEmpty.Inc()
	case errors.Is(err, ErrBadPRI):
		m.rejBadPRI.Inc()
	default:
		m.rejNoPRI.Inc()
	}
}

// register registers c on reg, or returns the collector already
// registered under the same name (a second receiver on one registry).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		if are, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); ok {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err) // a programming error: two metrics of one name and different shape
	}
	return c
}
