// Package queue holds the implementations of record.Sink, the ingest path
// between producers (collectors, agent intake) and the store. The default
// is Channel: a bounded in-process queue drained by writer goroutines that
// batch records into transactions. With -nats, syslog, telemetry and deep
// batches go through NATS JetStream instead (store/queue/natsq); flows
// stay here.
//
// Flows are routed by exporter to one writer each, which sums them into
// that exporter's open minutes in memory (flowagg.Aggregator) and writes
// each minute once when it closes; a background loop rolls closed hours
// up (store.DB.BuildFlowHours). See the store package comment.
//
// Conservation: every record handed to Put is either written or counted as
// dropped with a reason (netmon_ingest_records_total{kind,result}), also at
// shutdown, where Stop drains the queue and writes every open minute
// before returning. A flow counts as written when its minute commits;
// until then it is held (netmon_flow_aggregation_records), and the flow
// reads see it through ReadOpenFlows (open.go).
package queue

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
	"netmon/store/flowagg"
	"netmon/store/record"
)

// Writer is where batches go; *store.DB implements it.
type Writer interface {
	// WriteFlowMinutes stores closed minutes, each whole or not at all,
	// and returns how many are committed, also on error: a retry writes
	// only the rest.
	WriteFlowMinutes(ctx context.Context, ms []flowagg.Minute) (int, error)
	// BuildFlowHours rolls the hours ended by before into hourly rows.
	BuildFlowHours(ctx context.Context, before int64, hourRows int) (int, error)
	WriteSyslog(ctx context.Context, es []record.SyslogEvent) (int, error)
	// WriteTelemetry (and WriteSyslog) return how many records are
	// committed, also on error: a retry writes only the rest.
	WriteTelemetry(ctx context.Context, ts []record.Telemetry) (int, error)
	// WriteDeep, like WriteTelemetry, returns how many are committed.
	WriteDeep(ctx context.Context, ds []record.Deep) (int, error)
}

// Kinds of record, indexes of Channel.pending.
const (
	kindFlow = iota
	kindSyslog
	kindTelemetry
	kindDeep
	numKinds
)

var kindNames = [numKinds]string{"flow", "syslog", "telemetry", "deep"}

// flowInbox is one worker's queue of flow batches. It is a list, not a
// channel, so a batch split by exporter over several workers is taken
// whole or refused whole: the pending bound decides, not a channel's room.
type flowInbox struct {
	mu    sync.Mutex
	parts [][]record.Flow
	wake  chan struct{} // capacity 1: "parts is not empty"
}

type item struct {
	syslog    []record.SyslogEvent
	telemetry []record.Telemetry
	deep      []record.Deep
}

// Channel is the bounded in-process queue.
type Channel struct {
	// guard recovers a panic of a writer or the hour roll-up (counted in
	// netmon_panics_total{component="queue"}) and runs it again; the
	// batch a writer held is lost, counted there.
	guard *panics.Guard
	log   *slog.Logger
	cfg   Config
	w     Writer
	ch    chan item
	wg    sync.WaitGroup

	mu     sync.RWMutex // guards closed against Put racing Stop
	closed bool

	// inbox holds each worker's flow batches: flows are routed by exporter
	// so that one writer sums all of an exporter's records and every
	// aggregate row is upserted by one writer only (four writers summing
	// the same conversations wrote each row four times, and on
	// PostgreSQL waited on each other's row locks).
	inbox []flowInbox

	// pending counts each kind's records from Put until written or
	// dropped; limit is its bound.
	pending [numKinds]atomic.Int64
	limit   [numKinds]int64

	// aggKeys and aggRecords are the 5-tuples and flow records held in
	// open minutes over all writers (keys bounded by cfg.Flows.MaxKeys).
	aggKeys, aggRecords atomic.Int64
	aggs                []*flowagg.Aggregator
	flushReq            []chan chan struct{} // per writer: close every open minute now
	peekReq             []chan chan struct{} // per writer: summarise the open minutes (open.go)
	live                liveState
	rereads             prometheus.Counter
	workersDone         chan struct{} // closed once Stop's writers returned
	hoursDone           chan struct{}
	hoursStop           chan struct{}

	records *prometheus.CounterVec // kind, result (written|dropped)
	minutes prometheus.Counter
	hourErr prometheus.Counter
	dropped *prometheus.CounterVec // kind, reason
	depth   prometheus.GaugeFunc
	// droppedN is every record dropped, for Dropped.
	droppedN atomic.Uint64
}

// New returns the queue; Start launches the writers.
func New(log *slog.Logger, cfg Config, w Writer, reg prometheus.Registerer) *Channel {
	d := DefaultConfig()
	if cfg.Capacity <= 0 {
		cfg.Capacity = d.Capacity
	}
	if cfg.FlowRecords <= 0 {
		cfg.FlowRecords = d.FlowRecords
	}
	if cfg.SyslogRecords <= 0 {
		cfg.SyslogRecords = d.SyslogRecords
	}
	if cfg.TelemetryRecords <= 0 {
		cfg.TelemetryRecords = d.TelemetryRecords
	}
	if cfg.Workers <= 0 {
		cfg.Workers = d.Workers
	}
	if cfg.BatchMax <= 0 {
		cfg.BatchMax = d.BatchMax
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = d.FlushEvery
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = d.RetryDelay
	}
	if cfg.HourRows <= 0 {
		cfg.HourRows = d.HourRows
	}
	if cfg.HourDelay <= 0 {
		cfg.HourDelay = d.HourDelay
	}
	if cfg.HourEvery <= 0 {
		cfg.HourEvery = d.HourEvery
	}
	if cfg.OpenMaxAge <= 0 {
		cfg.OpenMaxAge = d.OpenMaxAge
	}
	if cfg.OpenWait <= 0 {
		cfg.OpenWait = d.OpenWait
	}
	q := &Channel{log: log, cfg: cfg, w: w, ch: make(chan item, cfg.Capacity), guard: panics.New(reg, log, "queue")}
	if cfg.DeepRecords <= 0 {
		cfg.DeepRecords = d.DeepRecords
	}
	q.limit = [numKinds]int64{int64(cfg.FlowRecords), int64(cfg.SyslogRecords), int64(cfg.TelemetryRecords), int64(cfg.DeepRecords)}
	q.inbox = make([]flowInbox, cfg.Workers)
	for i := range q.inbox {
		q.inbox[i].wake = make(chan struct{}, 1)
		q.aggs = append(q.aggs, flowagg.New(cfg.Flows, &q.aggKeys, &q.aggRecords))
		q.flushReq = append(q.flushReq, make(chan chan struct{}))
		q.peekReq = append(q.peekReq, make(chan chan struct{}))
	}
	q.live.init(cfg.Workers)
	q.workersDone = make(chan struct{})
	q.minutes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "netmon_flow_minutes_written_total", Help: "Exporter minutes of flows written (each once, when it closes; a late flow's minute again).",
	})
	q.rereads = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "netmon_flow_open_rereads_total", Help: "Flow reads made again because a minute's write began or ended while they read the open minutes (so that no minute is counted twice).",
	})
	q.hourErr = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "netmon_flow_hour_build_errors_total", Help: "Failed roll-ups of closed hours into flow_hours (retried at the next look).",
	})
	maxKeys := cfg.Flows.MaxKeys
	if maxKeys <= 0 {
		maxKeys = flowagg.DefaultConfig().MaxKeys
	}
	aggGauges := []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "netmon_flow_aggregation_keys", Help: "Distinct 5-tuples held in open exporter minutes (bounded, see netmon_flow_aggregation_keys_limit).",
		}, func() float64 { return float64(q.aggKeys.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "netmon_flow_aggregation_keys_limit", Help: "The bound of netmon_flow_aggregation_keys: beyond it new 5-tuples are summed into their minute's other row.",
		}, func() float64 { return float64(maxKeys) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "netmon_flow_aggregation_bytes", Help: "Memory held by open exporter minutes, estimated from the keys held.",
		}, func() float64 { return float64(q.aggKeys.Load() * flowagg.KeyBytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "netmon_flow_aggregation_records", Help: "Flow records summed into open minutes, not yet written (written when their minute closes).",
		}, func() float64 { return float64(q.aggRecords.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "netmon_flow_aggregation_folded_total", Help: "Flow records summed into an other row because the 5-tuple bound was reached (their totals are kept, their detail is not).",
		}, func() float64 {
			var n int64
			for _, a := range q.aggs {
				n += a.Folded()
			}
			return float64(n)
		}),
	}
	q.records = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "netmon_ingest_records_total", Help: "Records leaving the ingest queue, by kind (flow, syslog, telemetry, deep) and result (written, dropped).",
	}, []string{"kind", "result"})
	q.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "netmon_ingest_dropped_total", Help: "Records dropped by the ingest path, by kind and reason (queue_full, store_error, closed).",
	}, []string{"kind", "reason"})
	q.depth = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "netmon_ingest_queue_depth", Help: "Syslog and telemetry batches waiting in the ingest queue's channel (all kinds, records: netmon_ingest_pending_records).",
	}, func() float64 { return float64(len(q.ch)) })
	cs := append([]prometheus.Collector{q.records, q.dropped, q.depth, q.minutes, q.hourErr, q.rereads}, aggGauges...)
	for k, name := range kindNames {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "netmon_ingest_pending_records", Help: "Records held by the ingest queue (waiting or being written), by kind; each kind is bounded (see the README).",
			ConstLabels: prometheus.Labels{"kind": name},
		}, func() float64 { return float64(q.pending[k].Load()) }))
	}
	if reg != nil {
		for _, c := range cs {
			_ = reg.Register(c)
		}
	}
	return q
}

// PutFlows queues a copy of fs, split by exporter over the writers; false
// (and counted) when the queue is full.
func (q *Channel) PutFlows(fs []record.Flow) bool {
	if len(fs) == 0 {
		return true
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	n := int64(len(fs))
	reason := "closed"
	if !q.closed {
		if q.pending[kindFlow].Add(n) <= q.limit[kindFlow] {
			q.routeFlows(fs)
			return true
		}
		q.pending[kindFlow].Add(-n)
		reason = "queue_full"
	}
	q.drop(kindNames[kindFlow], reason, len(fs))
	return false
}

// routeFlows copies fs into one part per writer, by exporter.
func (q *Channel) routeFlows(fs []record.Flow) {
	w := len(q.inbox)
	if w == 1 {
		q.deliver(0, append([]record.Flow(nil), fs...))
		return
	}
	// Batches usually come from one exporter or a few: the shard of the
	// last exporter seen is reused.
	shards := make([]uint8, len(fs))
	counts := make([]int, w)
	var last netip.Addr
	lastShard := 0
	for i := range fs {
		if i == 0 || fs[i].Exporter != last {
			last, lastShard = fs[i].Exporter, record.Shard(fs[i].Exporter, w)
		}
		shards[i] = uint8(lastShard)
		counts[lastShard]++
	}
	parts := make([][]record.Flow, w)
	for i, c := range counts {
		if c == len(fs) {
			q.deliver(i, append([]record.Flow(nil), fs...))
			return
		}
		if c > 0 {
			parts[i] = make([]record.Flow, 0, c)
		}
	}
	for i := range fs {
		parts[shards[i]] = append(parts[shards[i]], fs[i])
	}
	for i, p := range parts {
		if len(p) > 0 {
			q.deliver(i, p)
		}
	}
}

func (q *Channel) deliver(w int, part []record.Flow) {
	in := &q.inbox[w]
	in.mu.Lock()
	in.parts = append(in.parts, part)
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default: // already signalled
	}
}

// PutSyslog queues a copy of es; false (and counted) when the queue is full.
func (q *Channel) PutSyslog(es []record.SyslogEvent) bool {
	if len(es) == 0 {
		return true
	}
	return q.put(item{syslog: append([]record.SyslogEvent(nil), es...)}, kindSyslog, len(es))
}

// PutTelemetry queues a copy of ts; false (and counted) when the queue is
// full, so the agent intake can answer 503 and the agent keeps the batch.
func (q *Channel) PutTelemetry(ts []record.Telemetry) bool {
	if len(ts) == 0 {
		return true
	}
	return q.put(item{telemetry: append([]record.Telemetry(nil), ts...)}, kindTelemetry, len(ts))
}

// PutDeep queues a copy of ds (deep collection of agent batches); false
// (and counted) when the queue is full.
func (q *Channel) PutDeep(ds []record.Deep) bool {
	if len(ds) == 0 {
		return true
	}
	return q.put(item{deep: append([]record.Deep(nil), ds...)}, kindDeep, len(ds))
}

func (q *Channel) put(it item, kind, n int) bool {
	q.mu.RLock()
	defer q.mu.RUnlock()
	reason := "closed"
	if !q.closed {
		reason = "queue_full"
		if q.pending[kind].Add(int64(n)) <= q.limit[kind] {
			select {
			case q.ch <- it:
				return true
			default:
			}
		}
		q.pending[kind].Add(-int64(n))
	}
	q.drop(kindNames[kind], reason, n)
	return false
}

// Dropped returns the records the ingest path dropped since start, of
// every kind and reason (the network health score reads it).
func (q *Channel) Dropped() uint64 { return q.droppedN.Load() }

func (q *Channel) drop(kind, reason string, n int) {
	q.droppedN.Add(uint64(n))
	q.dropped.WithLabelValues(kind, reason).Add(float64(n))
	q.records.WithLabelValues(kind, "dropped").Add(float64(n))
}

// Start launches the writers and the hour roll-up.
func (q *Channel) Start() error {
	for i := range q.cfg.Workers {
		q.wg.Add(1)
		go func() {
			defer q.wg.Done()
			q.guard.Keep(nil, func() { q.worker(i) })
		}()
	}
	q.hoursStop, q.hoursDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(q.hoursDone)
		q.guard.Keep(q.hoursStop, q.hours)
	}()
	return nil
}

// Stop refuses new records, writes everything queued and every open
// minute, and returns.
func (q *Channel) Stop() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	close(q.ch)
	q.mu.Unlock()
	q.wg.Wait()
	close(q.workersDone)
	if q.hoursStop != nil {
		close(q.hoursStop)
		<-q.hoursDone
	}
	return nil
}

// Flush writes every open minute now, whatever its deadline, and returns
// once they are committed (or dropped): for tests and benchmarks that
// read what was sent without waiting for minutes to close. A later record
// of a flushed minute opens it again (appended, as a late flow's). Only
// between Start and Stop (after Stop it returns at once).
func (q *Channel) Flush() {
	for _, req := range q.flushReq {
		done := make(chan struct{})
		select {
		case req <- done:
			<-done
		case <-q.workersDone:
			return
		}
	}
}

// hours rolls closed hours up every HourEvery: a failure is counted and
// retried at the next look (the minutes are stored; only the roll-up
// waits).
func (q *Channel) hours() {
	t := time.NewTicker(q.cfg.HourEvery)
	defer t.Stop()
	for {
		select {
		case <-q.hoursStop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		before := time.Now().Add(-q.cfg.HourDelay).Unix()
		if _, err := q.w.BuildFlowHours(ctx, before, q.cfg.HourRows); err != nil {
			q.hourErr.Inc()
			q.log.Warn("flow hour roll-up failed", "error", err)
		}
		cancel()
	}
}

// worker sums flows into its exporters' open minutes as they come and
// writes the minutes that closed every FlushEvery; it gathers syslog and
// telemetry into a batch until BatchMax records or FlushEvery, then
// writes it.
func (q *Channel) worker(id int) {
	in := &q.inbox[id]
	agg := q.aggs[id]
	var syslog []record.SyslogEvent
	var telemetry []record.Telemetry
	var deep []record.Deep
	timer := time.NewTimer(q.cfg.FlushEvery)
	defer timer.Stop()
	flush := func() {
		if len(syslog) > 0 {
			q.write(kindSyslog, len(syslog), func(ctx context.Context, done int) (int, error) {
				return q.w.WriteSyslog(ctx, syslog[done:])
			})
			syslog = syslog[:0]
		}
		if len(telemetry) > 0 {
			q.write(kindTelemetry, len(telemetry), func(ctx context.Context, done int) (int, error) {
				return q.w.WriteTelemetry(ctx, telemetry[done:])
			})
			telemetry = telemetry[:0]
		}
		if len(deep) > 0 {
			q.write(kindDeep, len(deep), func(ctx context.Context, done int) (int, error) {
				return q.w.WriteDeep(ctx, deep[done:])
			})
			clear(deep)
			deep = deep[:0]
		}
	}
	// takeFlows sums what the inbox holds into the open minutes: the
	// records' memory is free at once, their sums wait for the minute.
	takeFlows := func() {
		in.mu.Lock()
		parts := in.parts
		in.parts = nil
		in.mu.Unlock()
		now := time.Now()
		for _, p := range parts {
			agg.Add(p, now)
			q.pending[kindFlow].Add(-int64(len(p)))
		}
	}
	for {
		select {
		case <-in.wake:
			takeFlows()
		case it, ok := <-q.ch:
			if !ok {
				// Stop closed the channel after the last Put: what is in
				// the inbox now is all there will be.
				takeFlows()
				q.writeClosed(id, agg.Due(time.Now(), true))
				flush()
				return
			}
			syslog = append(syslog, it.syslog...)
			telemetry = append(telemetry, it.telemetry...)
			deep = append(deep, it.deep...)
			if len(syslog)+len(telemetry)+len(deep) >= q.cfg.BatchMax {
				flush()
			}
		case done := <-q.flushReq[id]:
			takeFlows()
			q.writeClosed(id, agg.Due(time.Now(), true))
			close(done)
		case done := <-q.peekReq[id]:
			// What arrived is summed first: the summary is as fresh as
			// the inbox.
			takeFlows()
			q.live.setPeek(id, agg.Peek(), time.Now())
			close(done)
		case <-timer.C:
			q.writeClosed(id, agg.Due(time.Now(), false))
			flush()
			timer.Reset(q.cfg.FlushEvery)
		}
	}
}

// writeClosed writes writer id's closed minutes, kept readable while
// their write is under way (open.go).
func (q *Channel) writeClosed(id int, ms []flowagg.Minute) {
	if len(ms) == 0 {
		return
	}
	q.live.begin(id, ms)
	defer q.live.end(id)
	q.writeMinutes(ms)
}

// writeMinutes writes closed minutes with retries of what is not committed
// yet; their records are counted written as their minutes commit, or
// dropped (store_error) after the last retry.
func (q *Channel) writeMinutes(ms []flowagg.Minute) {
	if len(ms) == 0 {
		return
	}
	records := func(ms []flowagg.Minute) (n int64) {
		for _, m := range ms {
			n += m.Records
		}
		return n
	}
	var err error
	for attempt := 0; attempt <= q.cfg.Retries && len(ms) > 0; attempt++ {
		if attempt > 0 {
			time.Sleep(q.cfg.RetryDelay)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var done int
		done, err = q.w.WriteFlowMinutes(ctx, ms)
		cancel()
		q.records.WithLabelValues(kindNames[kindFlow], "written").Add(float64(records(ms[:done])))
		q.minutes.Add(float64(done))
		ms = ms[done:]
		if err == nil {
			return
		}
	}
	if len(ms) == 0 {
		return
	}
	n := records(ms)
	q.log.Error("flow minutes dropped", "minutes", len(ms), "records", n, "error", err)
	q.drop(kindNames[kindFlow], "store_error", int(n))
}

// write runs fn with retries; records are counted written or dropped. fn
// gets how many of the n records are committed already and returns how
// many more it committed, also when it fails: a retry writes only the
// rest, so a committed record is neither written twice nor counted as
// dropped. Each call has its own deadline, and a call that committed
// something before failing (a deadline reached mid-batch) is progress,
// not a failed attempt: the rest goes on with a fresh deadline, so a
// large burst is written in committed slices instead of being dropped
// whole because the whole of it did not fit one deadline.
func (q *Channel) write(k, n int, fn func(ctx context.Context, done int) (int, error)) {
	defer q.pending[k].Add(-int64(n))
	kind := kindNames[k]
	done := 0
	var err error
	for attempt := 0; attempt <= q.cfg.Retries; {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var m int
		m, err = fn(ctx, done)
		cancel()
		done += m
		if err == nil {
			q.records.WithLabelValues(kind, "written").Add(float64(n))
			return
		}
		if m > 0 && done < n {
			continue
		}
		attempt++
		if attempt <= q.cfg.Retries {
			time.Sleep(q.cfg.RetryDelay)
		}
	}
	if done > 0 {
		q.records.WithLabelValues(kind, "written").Add(float64(done))
	}
	q.log.Error("ingest batch dropped", "kind", kind, "records", n-done, "error", err)
	q.drop(kind, "store_error", n-done)
}
