// Package natsq is the NATS JetStream ingest queue, used instead of the
// in-process queue.Channel when -nats is given (issue 33). It implements
// the producers' side of the channel queue for syslog, telemetry and deep
// batches: PutSyslog, PutTelemetry and PutDeep publish to ingest.<kind>
// and return once the server acknowledged (false, counted, when it did
// not), and durable pull consumers hand the batches to the store.
//
// Effectively once: every publish carries a Nats-Msg-Id that is stable
// for the batch (telemetry.<agent>.<seq>, deep.<agent>.<seq>, syslog.<a
// SHA-256 of the batch>), so a batch published again within the stream's
// duplicate window is stored once; a message is acknowledged (AckSync,
// waiting for the server's answer) only after the database committed it;
// and telemetry and deep rows are unique by (agent_id, seq) in the
// database, so a redelivery after a commit whose acknowledgement was lost
// writes nothing twice. Syslog rows have no such key: a batch redelivered
// after its commit (the hub killed between commit and acknowledgement) is
// stored twice.
//
// Flows are not carried: queue.Channel sums them per exporter into
// minutes in memory and writes a minute when it closes, so a flow batch
// cannot be acknowledged when "its" write commits. Flows stay on the
// channel path until that design exists (see the report of issue 33).
package natsq

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"netmon/store/record"
)

// Writer is where batches go; *store.DB implements it (the subset of
// queue.Writer this queue carries). Each returns how many records are
// committed, also on error.
type Writer interface {
	WriteSyslog(ctx context.Context, es []record.SyslogEvent) (int, error)
	WriteTelemetry(ctx context.Context, ts []record.Telemetry) (int, error)
	WriteDeep(ctx context.Context, ds []record.Deep) (int, error)
}

// Kinds carried, and the subject suffix of each.
const (
	KindSyslog    = "syslog"
	KindTelemetry = "telemetry"
	KindDeep      = "deep"
)

var kinds = []string{KindSyslog, KindTelemetry, KindDeep}

// Queue is the JetStream ingest queue.
type Queue struct {
	log *slog.Logger
	cfg Config
	w   Writer
	nc  *nats.Conn
	js  jetstream.JetStream
	st  jetstream.Stream

	mu      sync.RWMutex // guards closed against Put racing Stop
	closed  bool
	started bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	droppedN atomic.Uint64
	m        metrics
}

// New connects to cfg.URL, refuses a server older than MinServerVersion,
// and creates or updates the stream and its consumers. It fails when the
// server cannot be reached; once connected the client reconnects for
// ever, and Put sheds (counted) while it is away.
func New(log *slog.Logger, cfg Config, w Writer, reg prometheus.Registerer) (*Queue, error) {
	cfg = cfg.withDefaults()
	if cfg.URL == "" {
		return nil, errors.New("natsq: no NATS URL")
	}
	opts := []nats.Option{nats.Name("netmon hub"), nats.MaxReconnects(-1), nats.ReconnectWait(cfg.ReconnectWait),
		nats.Timeout(5 * time.Second)}
	if cfg.User != "" {
		opts = append(opts, nats.UserInfo(cfg.User, cfg.Password))
	}
	if cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if cfg.CAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.CAFile))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("natsq: connect %s: %w", cfg.URL, err)
	}
	if err := CheckServerVersion(nc.ConnectedServerVersion()); err != nil {
		nc.Close()
		return nil, err
	}
	q := &Queue{log: log, cfg: cfg, w: w, nc: nc}
	if err := q.setup(); err != nil {
		nc.Close()
		return nil, err
	}
	q.m = newMetrics(q, reg)
	return q, nil
}

// StreamConfig is the stream New asks for: file storage, a work queue
// (a message is removed once acknowledged), subjects ingest.>, MaxAge,
// MaxMsgs with discard new, the duplicate window, one replica.
func StreamConfig(cfg Config) jetstream.StreamConfig {
	cfg = cfg.withDefaults()
	return jetstream.StreamConfig{
		Name: cfg.Stream, Subjects: []string{SubjectPrefix + ">"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
		MaxAge: cfg.MaxAge, MaxMsgs: cfg.MaxMsgs, Discard: jetstream.DiscardNew,
		Duplicates: cfg.DupWindow, Replicas: 1,
	}
}

// ConsumerConfig is the durable pull consumer of one kind. MaxDeliver is
// unlimited on the server: the queue itself moves a message to
// ingest.dead at its MaxDeliver-th failed write (an explicit republish,
// not the max-deliveries advisory), and a message delivered more often
// than that without an outcome (hubs killed while writing it) is moved
// there before it is written again.
func ConsumerConfig(cfg Config, kind string) jetstream.ConsumerConfig {
	cfg = cfg.withDefaults()
	return jetstream.ConsumerConfig{
		Durable: cfg.Stream + "_" + kind, FilterSubject: SubjectPrefix + kind,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: cfg.AckWait, MaxDeliver: -1,
		DeliverPolicy: jetstream.DeliverAllPolicy, MaxAckPending: cfg.Workers * cfg.FetchBatch * 2,
	}
}

func (q *Queue) setup() error {
	js, err := jetstream.New(q.nc)
	if err != nil {
		return fmt.Errorf("natsq: %w", err)
	}
	q.js = js
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	want := StreamConfig(q.cfg)
	st, err := js.CreateOrUpdateStream(ctx, want)
	if err != nil {
		return fmt.Errorf("natsq: stream %s: %w", want.Name, err)
	}
	// A server that ignores a setting would break a promise quietly:
	// what it stored is compared with what was asked.
	got := st.CachedInfo().Config
	if got.Retention != want.Retention || got.Storage != want.Storage || got.MaxAge != want.MaxAge ||
		got.MaxMsgs != want.MaxMsgs || got.Discard != want.Discard || got.Duplicates != want.Duplicates {
		return fmt.Errorf("natsq: stream %s was not configured as asked (retention %v storage %v max age %v max msgs %d discard %v duplicates %v)",
			want.Name, got.Retention, got.Storage, got.MaxAge, got.MaxMsgs, got.Discard, got.Duplicates)
	}
	q.st = st
	for _, k := range kinds {
		if _, err := js.CreateOrUpdateConsumer(ctx, want.Name, ConsumerConfig(q.cfg, k)); err != nil {
			return fmt.Errorf("natsq: consumer %s: %w", k, err)
		}
	}
	return nil
}

// ServerVersion is the connected server's version.
func (q *Queue) ServerVersion() string { return q.nc.ConnectedServerVersion() }

// Ready is nil while the connection to NATS is up (for /readyz).
func (q *Queue) Ready() error {
	if s := q.nc.Status(); s != nats.CONNECTED {
		return fmt.Errorf("nats %s: %v", q.cfg.URL, s)
	}
	return nil
}

// Dropped returns the records shed since start (not published, or
// dead-lettered), of every kind and reason.
func (q *Queue) Dropped() uint64 { return q.droppedN.Load() }

// PutSyslog publishes es as one message, or as several when the
// encoded batch exceeds the server's max_payload (1 MB by default; a
// collector's batch is up to 256 events of up to 8 KB and more); each
// message's id is a SHA-256 of its encoded events. False (and counted)
// when one was not acknowledged.
func (q *Queue) PutSyslog(es []record.SyslogEvent) bool {
	if len(es) == 0 {
		return true
	}
	data, err := json.Marshal(es)
	if err != nil {
		q.drop(KindSyslog, "encode", len(es))
		return false
	}
	if int64(len(data)) > q.nc.MaxPayload()-headroom {
		if len(es) == 1 {
			q.drop(KindSyslog, "too_large", 1)
			return false
		}
		h := len(es) / 2
		a := q.PutSyslog(es[:h])
		return q.PutSyslog(es[h:]) && a
	}
	sum := sha256.Sum256(data)
	return q.publish(KindSyslog, "syslog."+hex.EncodeToString(sum[:16]), data, len(es))
}

// headroom is left of max_payload for the headers (message id, expected
// stream).
const headroom = 4096

// PutTelemetry publishes each batch as a message with the id
// telemetry.<agent>.<seq>; false (and counted) when one was not
// acknowledged, so the intake answers 503 and the agent sends again
// (what was published is then a duplicate, stored once).
func (q *Queue) PutTelemetry(ts []record.Telemetry) bool {
	ok := true
	for i := range ts {
		data, err := json.Marshal(ts[i : i+1])
		if err != nil {
			q.drop(KindTelemetry, "encode", 1)
			ok = false
			continue
		}
		id := "telemetry." + strconv.FormatInt(ts[i].AgentID, 10) + "." + strconv.FormatUint(ts[i].Seq, 10)
		ok = q.publish(KindTelemetry, id, data, 1) && ok
	}
	return ok
}

// PutDeep publishes each record as a message with the id
// deep.<agent>.<seq>; false (and counted) when one was not acknowledged.
func (q *Queue) PutDeep(ds []record.Deep) bool {
	ok := true
	for i := range ds {
		data, err := json.Marshal(ds[i : i+1])
		if err != nil {
			q.drop(KindDeep, "encode", 1)
			ok = false
			continue
		}
		id := "deep." + strconv.FormatInt(ds[i].AgentID, 10) + "." + strconv.FormatUint(ds[i].Seq, 10)
		ok = q.publish(KindDeep, id, data, 1) && ok
	}
	return ok
}

// publish sends one message and waits for the server's acknowledgement.
// While the connection is down it sheds at once rather than hold the
// producer for PublishTimeout.
func (q *Queue) publish(kind, id string, data []byte, n int) bool {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		q.drop(kind, "closed", n)
		return false
	}
	if q.nc.Status() != nats.CONNECTED {
		q.m.pubFail.WithLabelValues(kind, "unavailable").Inc()
		q.drop(kind, "nats_unavailable", n)
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), q.cfg.PublishTimeout)
	defer cancel()
	msg := &nats.Msg{Subject: SubjectPrefix + kind, Data: data}
	ack, err := q.js.PublishMsg(ctx, msg, jetstream.WithMsgID(id), jetstream.WithExpectStream(q.cfg.Stream))
	if err != nil {
		reason := "error"
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
			reason = "timeout"
		}
		q.m.pubFail.WithLabelValues(kind, reason).Inc()
		q.log.Warn("nats publish failed", "kind", kind, "records", n, "error", err)
		q.drop(kind, "nats_"+reason, n)
		return false
	}
	if ack.Duplicate {
		q.m.duplicates.WithLabelValues(kind).Inc()
	} else {
		q.m.published.WithLabelValues(kind).Inc()
	}
	return true
}

func (q *Queue) drop(kind, reason string, n int) {
	q.droppedN.Add(uint64(n))
	q.m.dropped.WithLabelValues(kind, reason).Add(float64(n))
	q.m.records.WithLabelValues(kind, "dropped").Add(float64(n))
}

// Start launches Workers fetch-and-write loops per kind.
func (q *Queue) Start() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started || q.closed {
		return nil
	}
	q.started = true
	ctx, cancel := context.WithCancel(context.Background())
	q.cancel = cancel
	for _, k := range kinds {
		cons, err := q.js.Consumer(ctx, q.cfg.Stream, q.cfg.Stream+"_"+k)
		if err != nil {
			cancel()
			return fmt.Errorf("natsq: consumer %s: %w", k, err)
		}
		for range q.cfg.Workers {
			q.wg.Add(1)
			go func() {
				defer q.wg.Done()
				q.work(ctx, k, cons)
			}()
		}
	}
	return nil
}

// Stop refuses new records, lets each worker finish the batch in hand
// (written and acknowledged, or left to be delivered again) and closes
// the connection. What is published and not yet written stays in the
// stream for the next start (or another hub).
func (q *Queue) Stop() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	if q.cancel != nil {
		q.cancel()
	}
	q.mu.Unlock()
	q.wg.Wait()
	// Every acknowledgement was synchronous: nothing is left to flush.
	q.nc.Close()
	return nil
}
