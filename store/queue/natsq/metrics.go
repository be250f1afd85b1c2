package natsq

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	published, duplicates, redelivered, dead, ackFail, holds *prometheus.CounterVec // kind
	pubFail                                                  *prometheus.CounterVec // kind, reason
	records                                                  *prometheus.CounterVec // kind, result
	dropped                                                  *prometheus.CounterVec // kind, reason
	latency                                                  *prometheus.HistogramVec
}

func newMetrics(q *Queue, reg prometheus.Registerer) metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := metrics{
		published:   counter("netmon_nats_published_total", "Messages published to ingest.<kind> and acknowledged by NATS JetStream, by kind.", "kind"),
		duplicates:  counter("netmon_nats_publish_duplicates_total", "Publishes NATS acknowledged as duplicates of a message id seen within the duplicate window (stored once), by kind.", "kind"),
		pubFail:     counter("netmon_nats_publish_failures_total", "Publishes not acknowledged (unavailable: the connection was down; timeout; error), by kind and reason; their records are shed.", "kind", "reason"),
		redelivered: counter("netmon_nats_redelivered_total", "Messages delivered again (a failed write, or a hub that stopped before acknowledging), by kind.", "kind"),
		dead:        counter("netmon_nats_dead_lettered_total", "Messages moved to ingest.dead (MaxDeliver failed writes, undecodable), by kind.", "kind"),
		ackFail:     counter("netmon_nats_ack_failures_total", "Acknowledgements after a commit that NATS did not confirm (the message is delivered again), by kind.", "kind"),
		holds:       counter("netmon_nats_store_holds_total", "Fetched batches held (not counted as failed deliveries) because the database did not answer, by kind.", "kind"),
		records:     counter("netmon_ingest_records_total", "Records leaving the ingest queue, by kind (flow, syslog, telemetry, deep) and result (written, dropped).", "kind", "result"),
		dropped:     counter("netmon_ingest_dropped_total", "Records dropped by the ingest path, by kind and reason (NATS mode: nats_unavailable, nats_timeout, nats_error, dead_letter, closed, encode, too_large).", "kind", "reason"),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "netmon_nats_commit_latency_seconds", Help: "From a message's storage in the stream to its database commit, by kind.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"kind"}),
	}
	cs := []prometheus.Collector{m.published, m.duplicates, m.pubFail, m.redelivered, m.dead, m.ackFail, m.holds, m.records, m.dropped, m.latency}
	// The depths are the server's: asked at scrape time (1 s at most),
	// the last answer kept while NATS does not answer.
	var mu sync.Mutex
	last := map[string]float64{}
	remember := func(key string, f func(ctx context.Context) (float64, error)) func() float64 {
		return func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			v, err := f(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				last[key] = v
			}
			return last[key]
		}
	}
	for _, k := range kinds {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "netmon_nats_pending_messages", Help: "Messages of a kind in the stream not yet written: waiting, or delivered and not yet acknowledged.",
			ConstLabels: prometheus.Labels{"kind": k},
		}, remember(k, func(ctx context.Context) (float64, error) {
			n, err := q.Pending(ctx, k)
			return float64(n), err
		})))
	}
	cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "netmon_nats_dead_letter_messages", Help: "Messages held on ingest.dead (kept for the stream's max age, 24 h).",
	}, remember("dead", func(ctx context.Context) (float64, error) {
		n, err := q.DeadLetters(ctx)
		return float64(n), err
	})))
	if reg != nil {
		for _, c := range cs {
			_ = reg.Register(c)
		}
	}
	return m
}

// Pending is how many messages of kind the stream holds unwritten:
// not delivered yet, or delivered and not acknowledged.
func (q *Queue) Pending(ctx context.Context, kind string) (uint64, error) {
	c, err := q.js.Consumer(ctx, q.cfg.Stream, q.cfg.Stream+"_"+kind)
	if err != nil {
		return 0, err
	}
	ci := c.CachedInfo()
	return ci.NumPending + uint64(ci.NumAckPending), nil
}

// DeadLetters is how many messages ingest.dead holds.
func (q *Queue) DeadLetters(ctx context.Context) (uint64, error) {
	si, err := q.st.Info(ctx, jetstream.WithSubjectFilter(DeadSubject))
	if err != nil {
		return 0, err
	}
	return si.State.Subjects[DeadSubject], nil
}
