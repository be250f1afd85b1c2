package queue

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store"
	"netmon/store/flowagg"
	"netmon/store/record"
	"netmon/store/storetest"
)

// slowWriter is the real store behind a delay, to fill the queue.
type slowWriter struct {
	*store.DB
	delay time.Duration
}

func (w slowWriter) WriteFlowMinutes(ctx context.Context, ms []flowagg.Minute) (int, error) {
	time.Sleep(w.delay)
	return w.DB.WriteFlowMinutes(ctx, ms)
}

func flows(n int, ts int64) []record.Flow {
	out := make([]record.Flow, n)
	for i := range out {
		out[i] = record.Flow{TS: ts + int64(i%60), Exporter: netip.MustParseAddr("192.0.2.1"),
			Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"),
			SrcPort: uint16(1000 + i%50), DstPort: 443, Proto: 6, Packets: 2, Octets: 100}
	}
	return out
}

func TestQueueWritesEverything(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		reg := prometheus.NewRegistry()
		cfg := DefaultConfig()
		cfg.FlushEvery = 20 * time.Millisecond
		q := New(slog.New(slog.DiscardHandler), cfg, db, reg)
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		ts := time.Now().Truncate(time.Hour).Unix()
		for range 20 {
			if !q.PutFlows(flows(500, ts)) {
				t.Fatal("queue refused a batch")
			}
		}
		if !q.PutSyslog([]record.SyslogEvent{{TS: ts, Host: "sw1", Severity: 4, Tag: "app", Message: "hello"}}) {
			t.Fatal("syslog refused")
		}
		if err := q.Stop(); err != nil {
			t.Fatal(err)
		}
		if q.PutFlows(flows(1, ts)) {
			t.Fatal("accepted after Stop")
		}
		if got := testutil.ToFloat64(q.records.WithLabelValues("flow", "written")); got != 10000 {
			t.Errorf("written %v, want 10000", got)
		}
		if got := testutil.ToFloat64(q.dropped.WithLabelValues("flow", "closed")); got != 1 {
			t.Errorf("dropped after close %v", got)
		}
		rows, err := db.TopFlows(context.Background(), ts, 100, "", store.FlowFilter{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var packets, octets, nflows int64
		for _, r := range rows {
			packets += r.Packets
			octets += r.Octets
			nflows += r.Flows
		}
		if len(rows) != 50 || packets != 20000 || octets != 1_000_000 || nflows != 10000 {
			t.Errorf("%d rows, %d packets, %d octets, %d flows", len(rows), packets, octets, nflows)
		}
		sl, err := db.ListSyslog(context.Background(), 10, 0, 0, "")
		if err != nil || len(sl) != 1 || sl[0].Message != "hello" {
			t.Errorf("syslog %v %v", sl, err)
		}
	})
}

// TestQueueConservation: with a slow store and a small queue, what is not
// written is counted as dropped: sent = written + dropped.
func TestQueueConservation(t *testing.T) {
	db := storetest.OpenSQLite(t)
	cfg := DefaultConfig()
	cfg.FlowRecords, cfg.Workers, cfg.FlushEvery = 400, 1, 5*time.Millisecond
	// Minutes close at the next look, so the slow store holds the writer.
	cfg.Flows.Grace = time.Nanosecond
	q := New(slog.New(slog.DiscardHandler), cfg, slowWriter{db, 20 * time.Millisecond}, nil)
	_ = q.Start()
	sent, refused := 0, 0
	for range 200 {
		sent += 100
		if !q.PutFlows(flows(100, 1_700_000_000)) {
			refused += 100
		}
	}
	_ = q.Stop()
	written := testutil.ToFloat64(q.records.WithLabelValues("flow", "written"))
	dropped := testutil.ToFloat64(q.records.WithLabelValues("flow", "dropped"))
	if refused == 0 || int(written+dropped) != sent || int(dropped) != refused {
		t.Fatalf("sent %d = written %v + dropped %v? refused %d", sent, written, dropped, refused)
	}
	if full := testutil.ToFloat64(q.dropped.WithLabelValues("flow", "queue_full")); int(full) != refused {
		t.Errorf("queue_full %v, refused %d", full, refused)
	}
}

// TestQueueTelemetryBound: telemetry is bounded in batches held, whatever
// room the channel has; what was refused is counted, the rest written, and
// the bound frees up as batches are written.
func TestQueueTelemetryBound(t *testing.T) {
	db := storetest.OpenSQLite(t)
	cfg := DefaultConfig()
	cfg.TelemetryRecords, cfg.Workers, cfg.FlushEvery = 10, 1, time.Hour
	q := New(slog.New(slog.DiscardHandler), cfg, db, nil)
	// Not started: nothing is written, so the bound is reached.
	accepted := 0
	for i := range 15 {
		if q.PutTelemetry([]record.Telemetry{{AgentID: 1, Seq: uint64(i + 1)}}) {
			accepted++
		}
	}
	if accepted != 10 || q.pending[kindTelemetry].Load() != 10 {
		t.Fatalf("accepted %d, pending %d; want 10 and 10", accepted, q.pending[kindTelemetry].Load())
	}
	if full := testutil.ToFloat64(q.dropped.WithLabelValues("telemetry", "queue_full")); full != 5 {
		t.Errorf("queue_full %v, want 5", full)
	}
	// Flows are bounded apart: telemetry's bound does not refuse them.
	if !q.PutFlows(flows(3, 1_700_000_000)) {
		t.Error("flows refused by the telemetry bound")
	}
	_ = q.Start()
	_ = q.Stop()
	if p := q.pending[kindTelemetry].Load(); p != 0 {
		t.Errorf("pending after the writes %d, want 0", p)
	}
	written := testutil.ToFloat64(q.records.WithLabelValues("telemetry", "written"))
	dropped := testutil.ToFloat64(q.records.WithLabelValues("telemetry", "dropped"))
	if written+dropped != 15 || dropped != 5 {
		t.Errorf("written %v + dropped %v, want 10 + 5 (agent 1 does not exist: the store drops its batches silently but the queue wrote them)", written, dropped)
	}
}

// recordingWriter notes which exporters each flow write carried.
type recordingWriter struct {
	*store.DB
	mu    sync.Mutex
	calls []map[netip.Addr]int
}

func (w *recordingWriter) WriteFlowMinutes(ctx context.Context, ms []flowagg.Minute) (int, error) {
	seen := map[netip.Addr]int{}
	for _, m := range ms {
		seen[m.Exporter] += int(m.Records)
	}
	w.mu.Lock()
	w.calls = append(w.calls, seen)
	w.mu.Unlock()
	return w.DB.WriteFlowMinutes(ctx, ms)
}

// TestQueueRoutesByExporter: batches mixing exporters are split so that
// each exporter's records go to one writer (the one record.Shard names), none
// is lost or doubled, and the store's sums are exact.
func TestQueueRoutesByExporter(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		w := &recordingWriter{DB: db}
		cfg := DefaultConfig()
		cfg.Workers, cfg.FlushEvery = 4, 10*time.Millisecond
		q := New(slog.New(slog.DiscardHandler), cfg, w, nil)
		_ = q.Start()
		ts := time.Now().Truncate(time.Hour).Unix()
		exporters := []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2"), netip.MustParseAddr("2001:db8::3"), netip.MustParseAddr("198.51.100.4")}
		for round := range 30 {
			batch := flows(200, ts)
			for i := range batch {
				batch[i].Exporter = exporters[(i+round)%len(exporters)]
			}
			if !q.PutFlows(batch) {
				t.Fatal("refused")
			}
		}
		_ = q.Stop()
		total := map[netip.Addr]int{}
		for _, c := range w.calls {
			for e, n := range c {
				total[e] += n
			}
		}
		for _, e := range exporters {
			if total[e] != 1500 {
				t.Errorf("exporter %s: %d records written, want 1500", e, total[e])
			}
		}
		if got := testutil.ToFloat64(q.records.WithLabelValues("flow", "written")); got != 6000 {
			t.Errorf("written %v, want 6000", got)
		}
		if p := q.pending[kindFlow].Load(); p != 0 {
			t.Errorf("pending %d after Stop", p)
		}
		rows, err := db.TopFlows(context.Background(), ts, 1000, "", store.FlowFilter{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var nflows int64
		for _, r := range rows {
			nflows += r.Flows
		}
		if nflows != 6000 {
			t.Errorf("stored %d flows, want 6000", nflows)
		}
	})
}

// TestRouteFlows: a mixed batch lands in the inboxes of its exporters'
// writers, each part holding only its writer's exporters, in order.
func TestRouteFlows(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Workers = 3
	q := New(slog.New(slog.DiscardHandler), cfg, nil, nil) // not started
	batch := flows(90, 1_700_000_000)
	for i := range batch {
		batch[i].Exporter = netip.AddrFrom4([4]byte{10, 0, 0, byte(i % 7)})
		batch[i].Packets = uint64(i)
	}
	if !q.PutFlows(batch) {
		t.Fatal("refused")
	}
	n := 0
	for w := range q.inbox {
		for _, part := range q.inbox[w].parts {
			prev := -1
			for _, f := range part {
				if record.Shard(f.Exporter, 3) != w {
					t.Errorf("exporter %s in writer %d's inbox", f.Exporter, w)
				}
				if int(f.Packets) <= prev {
					t.Errorf("order not kept in writer %d", w)
				}
				prev = int(f.Packets)
				n++
			}
		}
	}
	if n != 90 {
		t.Errorf("%d records routed, want 90", n)
	}
}

// sliceWriter is the real store that commits at most slice syslog records
// a call and then reports its deadline, like a database that takes longer
// than one deadline for a burst but commits as it goes.
type sliceWriter struct {
	*store.DB
	slice int
	calls int
}

func (w *sliceWriter) WriteSyslog(ctx context.Context, es []record.SyslogEvent) (int, error) {
	w.calls++
	if len(es) <= w.slice {
		return w.DB.WriteSyslog(ctx, es)
	}
	n, err := w.DB.WriteSyslog(ctx, es[:w.slice])
	if err != nil {
		return n, err
	}
	return n, context.DeadlineExceeded
}

// TestQueueBurstWrittenInSlices (issue 28 item 15a): a burst larger than
// one write deadline is written in committed slices, each progress giving
// the rest a fresh deadline; nothing accepted is dropped. Before, the
// retries counted the progress as failures and dropped the burst's rest.
func TestQueueBurstWrittenInSlices(t *testing.T) {
	db := storetest.OpenSQLite(t)
	cfg := DefaultConfig()
	cfg.Workers, cfg.RetryDelay = 1, time.Millisecond
	w := &sliceWriter{DB: db, slice: 1000}
	q := New(slog.New(slog.DiscardHandler), cfg, w, nil)
	_ = q.Start()
	es := make([]record.SyslogEvent, 10_000)
	for i := range es {
		es[i] = record.SyslogEvent{TS: 1_700_000_000, Host: "h", Severity: 5, Message: "burst"}
	}
	if !q.PutSyslog(es) {
		t.Fatal("burst refused")
	}
	_ = q.Stop()
	written := testutil.ToFloat64(q.records.WithLabelValues("syslog", "written"))
	dropped := testutil.ToFloat64(q.dropped.WithLabelValues("syslog", "store_error"))
	var stored int
	if err := db.Reader().QueryRow(`SELECT COUNT(*) FROM syslog_events`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if written != 10_000 || dropped != 0 || stored != 10_000 {
		t.Errorf("written %v, dropped %v, stored %d; want 10000, 0, 10000 (%d calls)", written, dropped, stored, w.calls)
	}
}
