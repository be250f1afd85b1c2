package natsq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"netmon/store/record"
)

// delivery is one fetched message and what it carried.
type delivery struct {
	msg jetstream.Msg
	md  *jetstream.MsgMetadata
	n   int // records
}

// work fetches batches of one kind until ctx ends and writes each.
func (q *Queue) work(ctx context.Context, kind string, cons jetstream.Consumer) {
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, q.cfg.FetchWait)
		batch, err := cons.Fetch(q.cfg.FetchBatch, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			// Disconnected or the consumer is being recreated: wait a
			// little rather than spin.
			select {
			case <-ctx.Done():
			case <-time.After(q.cfg.FetchWait):
			}
			continue
		}
		var msgs []jetstream.Msg
		for m := range batch.Messages() {
			msgs = append(msgs, m)
		}
		cancel()
		if len(msgs) == 0 {
			continue
		}
		q.handle(ctx, kind, msgs)
	}
}

// handle writes one fetched batch. Messages delivered more than
// MaxDeliver times, or that cannot be decoded, go to ingest.dead first;
// the rest are written in one call, and when that fails each is written
// alone, so that a poison message fails by itself and the others are
// stored. A failure while the store does not answer at all (Pinger) is
// not the messages' fault: the batch is held and written again every
// RetryDelay, its ack deadline extended, without using up deliveries,
// so that a database outage does not empty the stream into ingest.dead.
func (q *Queue) handle(ctx context.Context, kind string, msgs []jetstream.Msg) {
	var ds []delivery
	var payloads []any
	for _, m := range msgs {
		md, err := m.Metadata()
		if err != nil {
			q.deadLetter(kind, delivery{msg: m}, "no metadata: "+err.Error())
			continue
		}
		d := delivery{msg: m, md: md}
		if md.NumDelivered > 1 {
			q.m.redelivered.WithLabelValues(kind).Inc()
		}
		if md.NumDelivered > uint64(q.cfg.MaxDeliver) {
			q.deadLetter(kind, d, fmt.Sprintf("delivered %d times without an outcome (the writer did not answer within the ack wait)", md.NumDelivered))
			continue
		}
		p, n, err := decode(kind, m.Data())
		if err != nil {
			q.deadLetter(kind, d, "undecodable: "+err.Error())
			continue
		}
		d.n = n
		ds = append(ds, d)
		payloads = append(payloads, p)
	}
	for len(ds) > 0 {
		var down bool
		ds, payloads, down = q.writeBatch(kind, ds, payloads)
		if !down || !q.hold(ctx, kind, ds) {
			return
		}
	}
}

// writeBatch writes ds and acknowledges what committed. When the store
// does not answer it returns the messages not written (their payloads
// trimmed of what did commit) and true; otherwise it settles every
// message (nak with RetryDelay, or ingest.dead at the last delivery).
func (q *Queue) writeBatch(kind string, ds []delivery, payloads []any) ([]delivery, []any, bool) {
	done, err := q.write(kind, concat(kind, payloads))
	// Messages whose records are all committed are acknowledged.
	var acks []delivery
	i, sum := 0, 0
	for ; i < len(ds) && sum+ds[i].n <= done; i++ {
		sum += ds[i].n
		acks = append(acks, ds[i])
	}
	defer func() { q.committed(kind, acks) }()
	if i == len(ds) {
		// All committed (an error after the last commit changes nothing).
		return nil, nil, false
	}
	// A message partly committed is written again from where its commit
	// stopped (the Writer's contract).
	rest := slices.Clone(payloads[i:])
	rest[0] = trim(kind, rest[0], done-sum)
	if q.storeDown() {
		return ds[i:], rest, true
	}
	for j := range rest {
		if len(rest) == 1 {
			q.failed(kind, ds[i], err)
			break
		}
		if _, werr := q.write(kind, rest[j]); werr != nil {
			q.failed(kind, ds[i+j], werr)
			continue
		}
		acks = append(acks, ds[i+j])
	}
	return nil, nil, false
}

// Pinger is implemented by a Writer that can tell whether it answers at
// all (*store.DB.Ping).
type Pinger interface {
	Ping(ctx context.Context) error
}

// storeDown is true when the Writer is a Pinger and its Ping fails.
func (q *Queue) storeDown() bool {
	p, ok := q.w.(Pinger)
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), q.cfg.RetryDelay+time.Second)
	defer cancel()
	return p.Ping(ctx) != nil
}

// hold keeps ds (extending their ack deadline) until the store answers
// again: true, write them again. False when the queue stops first: they
// are left to be delivered again after RetryDelay.
func (q *Queue) hold(ctx context.Context, kind string, ds []delivery) bool {
	q.m.holds.WithLabelValues(kind).Inc()
	q.log.Warn("store not answering; ingest batch held", "kind", kind, "messages", len(ds))
	t := time.NewTicker(q.cfg.RetryDelay)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			for _, d := range ds {
				_ = d.msg.NakWithDelay(q.cfg.RetryDelay)
			}
			return false
		case <-t.C:
		}
		for _, d := range ds {
			_ = d.msg.InProgress()
		}
		if !q.storeDown() {
			return true
		}
	}
}

// write hands records of one kind to the Writer with WriteTimeout.
func (q *Queue) write(kind string, recs any) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), q.cfg.WriteTimeout)
	defer cancel()
	switch kind {
	case KindSyslog:
		return q.w.WriteSyslog(ctx, recs.([]record.SyslogEvent))
	case KindTelemetry:
		return q.w.WriteTelemetry(ctx, recs.([]record.Telemetry))
	case KindDeep:
		return q.w.WriteDeep(ctx, recs.([]record.Deep))
	}
	return 0, fmt.Errorf("unknown kind %q", kind)
}

// ackParallel bounds the acknowledgements of a batch in flight at once.
const ackParallel = 64

// committed acknowledges written messages and waits for the server's
// answers (AckSync), several at a time, all within PublishTimeout: a
// server gone mid-batch costs one timeout, not one per message. A lost
// acknowledgement means a redelivery: telemetry and deep are unique in
// the database, syslog would be stored twice.
func (q *Queue) committed(kind string, ds []delivery) {
	if len(ds) == 0 {
		return
	}
	now := time.Now()
	n := 0
	for _, d := range ds {
		n += d.n
		q.m.latency.WithLabelValues(kind).Observe(now.Sub(d.md.Timestamp).Seconds())
	}
	q.m.records.WithLabelValues(kind, "written").Add(float64(n))
	ctx, cancel := context.WithTimeout(context.Background(), q.cfg.PublishTimeout)
	defer cancel()
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	sem := make(chan struct{}, ackParallel)
	for _, d := range ds {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := d.msg.DoubleAck(ctx); err != nil {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		q.m.ackFail.WithLabelValues(kind).Add(float64(f))
		q.log.Warn("nats ack after commit failed; those batches will be delivered again", "kind", kind, "messages", f, "error", firstErr.Load())
	}
}

// failed retries a message after RetryDelay, or at its MaxDeliver-th
// delivery moves it to ingest.dead with the error as the reason.
func (q *Queue) failed(kind string, d delivery, err error) {
	if err == nil {
		err = errors.New("writer committed less than the batch without an error")
	}
	if d.md.NumDelivered >= uint64(q.cfg.MaxDeliver) {
		q.deadLetter(kind, d, err.Error())
		return
	}
	q.log.Warn("ingest write failed; retried", "kind", kind, "delivery", d.md.NumDelivered, "error", err)
	if nerr := d.msg.NakWithDelay(q.cfg.RetryDelay); nerr != nil {
		q.log.Warn("nats nak failed; redelivered after the ack wait", "kind", kind, "error", nerr)
	}
}

// deadLetter publishes the message's payload to ingest.dead with the
// reason, the kind, the original Nats-Msg-Id and the delivery count in
// headers, then acknowledges the original. The dead letter's own id is
// derived from the original's, so a hub killed between the two steps
// does not store it twice. When the publish fails the original is
// delivered again after RetryDelay (and is moved at that delivery).
func (q *Queue) deadLetter(kind string, d delivery, reason string) {
	h := nats.Header{}
	h.Set(DeadReasonHeader, reason)
	h.Set(DeadKindHeader, kind)
	id := d.msg.Headers().Get(jetstream.MsgIDHeader)
	h.Set(DeadMsgIDHeader, id)
	if d.md != nil {
		h.Set(DeadDeliveriesHeader, strconv.FormatUint(d.md.NumDelivered, 10))
	}
	var opts []jetstream.PublishOpt
	if id != "" {
		opts = append(opts, jetstream.WithMsgID("dead."+id))
	}
	ctx, cancel := context.WithTimeout(context.Background(), q.cfg.PublishTimeout)
	defer cancel()
	if _, err := q.js.PublishMsg(ctx, &nats.Msg{Subject: DeadSubject, Header: h, Data: d.msg.Data()}, opts...); err != nil {
		q.log.Error("dead letter publish failed; retried", "kind", kind, "error", err)
		_ = d.msg.NakWithDelay(q.cfg.RetryDelay)
		return
	}
	if err := d.msg.DoubleAck(ctx); err != nil {
		q.m.ackFail.WithLabelValues(kind).Inc()
	}
	n := d.n
	if n == 0 {
		n = 1
	}
	q.m.dead.WithLabelValues(kind).Inc()
	q.log.Error("ingest message dead-lettered", "kind", kind, "msg_id", id, "reason", reason)
	q.drop(kind, "dead_letter", n)
}

// decode returns the message's records (a slice of the kind's record
// type) and their number.
func decode(kind string, data []byte) (any, int, error) {
	switch kind {
	case KindSyslog:
		var es []record.SyslogEvent
		err := json.Unmarshal(data, &es)
		return es, len(es), err
	case KindTelemetry:
		var ts []record.Telemetry
		err := json.Unmarshal(data, &ts)
		return ts, len(ts), err
	case KindDeep:
		var ds []record.Deep
		err := json.Unmarshal(data, &ds)
		return ds, len(ds), err
	}
	return nil, 0, fmt.Errorf("unknown kind %q", kind)
}

// concat joins decoded payloads of one kind into one slice.
func concat(kind string, ps []any) any {
	switch kind {
	case KindSyslog:
		var all []record.SyslogEvent
		for _, p := range ps {
			all = append(all, p.([]record.SyslogEvent)...)
		}
		return all
	case KindTelemetry:
		var all []record.Telemetry
		for _, p := range ps {
			all = append(all, p.([]record.Telemetry)...)
		}
		return all
	default:
		var all []record.Deep
		for _, p := range ps {
			all = append(all, p.([]record.Deep)...)
		}
		return all
	}
}

// trim drops the first skip records of a decoded payload.
func trim(kind string, p any, skip int) any {
	if skip <= 0 {
		return p
	}
	switch kind {
	case KindSyslog:
		return p.([]record.SyslogEvent)[skip:]
	case KindTelemetry:
		return p.([]record.Telemetry)[skip:]
	default:
		return p.([]record.Deep)[skip:]
	}
}
