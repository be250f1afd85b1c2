package natsq_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"netmon/store/queue/natsq"
	"netmon/store/record"
)

// TestStreamConfig: the stream and consumers the server holds are the
// ones spec 8 asks for, as the server reports them back.
func TestStreamConfig(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	q, _ := newQueue(t, natsq.Config{URL: s.ClientURL()}, newFakeWriter())
	_ = q
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	st, err := js.Stream(ctx, "INGEST")
	if err != nil {
		t.Fatal(err)
	}
	c := st.CachedInfo().Config
	got := fmt.Sprintf("%s %v %v %v %d %v %v", c.Name, c.Subjects, c.Retention, c.Storage, c.MaxMsgs, c.MaxAge, c.Duplicates)
	if want := "INGEST [ingest.>] WorkQueue File 5000000 24h0m0s 15m0s"; got != want {
		t.Errorf("stream %q, want %q", got, want)
	}
	if c.Discard != jetstream.DiscardNew {
		t.Errorf("discard %v, want new", c.Discard)
	}
	for _, k := range []string{"syslog", "telemetry", "deep"} {
		ci, err := js.Consumer(ctx, "INGEST", "INGEST_"+k)
		if err != nil {
			t.Fatal(err)
		}
		cc := ci.CachedInfo().Config
		if cc.FilterSubject != "ingest."+k || cc.AckPolicy != jetstream.AckExplicitPolicy || cc.MaxDeliver != -1 || cc.AckWait != time.Minute {
			t.Errorf("consumer %s: filter %s ack %v max deliver %d ack wait %v", k, cc.FilterSubject, cc.AckPolicy, cc.MaxDeliver, cc.AckWait)
		}
	}
	// The version the test binary embeds is the one the report names.
	if v := q.ServerVersion(); v != "2.15.2" {
		t.Errorf("server version %s", v)
	}
}

// TestDuplicateWrittenOnce: a batch published twice with the same
// Nats-Msg-Id (an agent sending again after a lost answer; a syslog
// batch published again) is stored once.
func TestDuplicateWrittenOnce(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	w := newFakeWriter()
	q, reg := newQueue(t, testConfig(s.ClientURL()), w)
	ev := []record.SyslogEvent{{TS: 1_800_000_000, Host: "r1", Source: netip.MustParseAddr("192.0.2.1"), Severity: 3, Message: "link down"}}
	for range 2 {
		if !q.PutTelemetry([]record.Telemetry{tel(7, 42)}) || !q.PutSyslog(ev) || !q.PutDeep([]record.Deep{{AgentID: 7, Seq: 42, TS: 1}}) {
			t.Fatal("publish not acknowledged")
		}
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the writes", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.telemetry) == 1 && len(w.syslog) == 1 && len(w.deep) == 1
	})
	waitFor(t, "nothing pending", func() bool {
		return metric(t, reg, "netmon_nats_pending_messages", "kind", "telemetry")+metric(t, reg, "netmon_nats_pending_messages", "kind", "syslog") == 0
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := w.telemetry[[2]int64{7, 42}]; n != 1 {
		t.Errorf("telemetry written %d times", n)
	}
	if n := w.deep[[2]int64{7, 42}]; n != 1 {
		t.Errorf("deep written %d times", n)
	}
	if len(w.syslog) != 1 || w.syslog[0].Message != "link down" || w.syslog[0].Source != ev[0].Source {
		t.Errorf("syslog %+v", w.syslog)
	}
	for _, k := range []string{"telemetry", "syslog", "deep"} {
		if p, d := metric(t, reg, "netmon_nats_published_total", "kind", k), metric(t, reg, "netmon_nats_publish_duplicates_total", "kind", k); p != 1 || d != 1 {
			t.Errorf("%s: published %v duplicates %v, want 1 and 1", k, p, d)
		}
	}
}

// TestRetryThenWritten: a write that fails twice is retried RetryDelay
// apart and written exactly once; each retry is a redelivery.
func TestRetryThenWritten(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	w := newFakeWriter()
	var attempts []time.Time
	w.fail = func(kind string, n int, agents []int64) error {
		attempts = append(attempts, time.Now())
		if len(attempts) <= 2 {
			return fmt.Errorf("database is locked")
		}
		return nil
	}
	cfg := testConfig(s.ClientURL())
	cfg.RetryDelay = 500 * time.Millisecond
	q, reg := newQueue(t, cfg, w)
	publishTelemetry(t, q, 9, 1)
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the write", func() bool { return len(w.telemetryCounts()) == 1 })
	time.Sleep(300 * time.Millisecond) // a wrong extra delivery would show now
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(attempts) != 3 || w.telemetry[[2]int64{9, 1}] != 1 {
		t.Fatalf("%d attempts, written %d times; want 3 attempts, written once", len(attempts), w.telemetry[[2]int64{9, 1}])
	}
	for i := 1; i < 3; i++ {
		if gap := attempts[i].Sub(attempts[i-1]); gap < cfg.RetryDelay {
			t.Errorf("attempt %d came %v after the previous one, before RetryDelay %v", i+1, gap, cfg.RetryDelay)
		}
	}
	if r := metric(t, reg, "netmon_nats_redelivered_total", "kind", "telemetry"); r != 2 {
		t.Errorf("redelivered %v, want 2", r)
	}
	if n := metric(t, reg, "netmon_ingest_records_total", "kind", "telemetry", "result", "written"); n != 1 {
		t.Errorf("written %v, want 1", n)
	}
	if n := metric(t, reg, "netmon_nats_commit_latency_seconds", "kind", "telemetry"); n != 1 {
		t.Errorf("latency samples %v, want 1", n)
	}
}

// TestPoisonDeadLettered: a message the writer always refuses goes to
// ingest.dead after MaxDeliver (10) deliveries with the writer's error as
// its reason, while the other messages, sent before and during its
// retries, are each written once.
func TestPoisonDeadLettered(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	w := newFakeWriter()
	poisonTries := 0
	w.fail = func(kind string, n int, agents []int64) error {
		if slices.Contains(agents, 666) {
			if n == 1 {
				poisonTries++
			}
			return errPoison
		}
		return nil
	}
	cfg := testConfig(s.ClientURL())
	cfg.RetryDelay = 100 * time.Millisecond
	q, reg := newQueue(t, cfg, w)
	publishTelemetry(t, q, 1, 20)
	publishTelemetry(t, q, 666, 1)
	publishTelemetry(t, q, 2, 20)
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	// More traffic while the poison is being retried.
	waitFor(t, "the poison's first failure", func() bool { w.mu.Lock(); defer w.mu.Unlock(); return poisonTries >= 1 })
	publishTelemetry(t, q, 3, 20)
	waitFor(t, "the others", func() bool { return len(w.telemetryCounts()) == 60 })
	deadAtOthers := metric(t, reg, "netmon_nats_dead_lettered_total", "kind", "telemetry")
	waitFor(t, "the dead letter", func() bool { return metric(t, reg, "netmon_nats_dead_lettered_total", "kind", "telemetry") == 1 })
	if deadAtOthers != 0 {
		t.Errorf("the others were written only after the poison was dead-lettered")
	}
	for k, n := range w.telemetryCounts() {
		if n != 1 || k[0] == 666 {
			t.Errorf("agent %d seq %d written %d times", k[0], k[1], n)
		}
	}
	w.mu.Lock()
	if poisonTries != 10 {
		t.Errorf("poison written alone %d times, want 10", poisonTries)
	}
	w.mu.Unlock()

	ctx := context.Background()
	if n, err := q.DeadLetters(ctx); err != nil || n != 1 {
		t.Errorf("dead letters %d %v, want 1", n, err)
	}
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	st, _ := js.Stream(ctx, "INGEST")
	m, err := st.GetLastMsgForSubject(ctx, natsq.DeadSubject)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Header
	if h.Get(natsq.DeadReasonHeader) != "poison: value out of range" || h.Get(natsq.DeadKindHeader) != "telemetry" ||
		h.Get(natsq.DeadMsgIDHeader) != "telemetry.666.1" || h.Get(natsq.DeadDeliveriesHeader) != "10" {
		t.Errorf("dead letter headers %v", h)
	}
	var ts []record.Telemetry
	if err := json.Unmarshal(m.Data, &ts); err != nil || len(ts) != 1 || ts[0].AgentID != 666 || ts[0].Seq != 1 {
		t.Errorf("dead letter payload %s %v", m.Data, err)
	}
	if p, err := q.Pending(ctx, natsq.KindTelemetry); err != nil || p != 0 {
		t.Errorf("pending %d %v, want 0", p, err)
	}
	if d := metric(t, reg, "netmon_nats_dead_letter_messages"); d != 1 {
		t.Errorf("dead letter gauge %v", d)
	}
	if d := metric(t, reg, "netmon_ingest_dropped_total", "kind", "telemetry", "reason", "dead_letter"); d != 1 {
		t.Errorf("dropped dead_letter %v", d)
	}
}

// TestStoreOutageHeld: while the database does not answer at all, a
// fetched batch is held and written again every RetryDelay without using
// up its deliveries: an outage far longer than MaxDeliver × RetryDelay
// dead-letters nothing, and everything is written once when it ends.
func TestStoreOutageHeld(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	w := newFakeWriter()
	w.down.Store(true)
	cfg := testConfig(s.ClientURL())
	cfg.MaxDeliver, cfg.RetryDelay = 3, 100*time.Millisecond
	q, reg := newQueue(t, cfg, w)
	publishTelemetry(t, q, 4, 40)
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // five times MaxDeliver × RetryDelay
	if h := metric(t, reg, "netmon_nats_store_holds_total", "kind", "telemetry"); h < 1 {
		t.Errorf("holds %v, want at least 1", h)
	}
	w.down.Store(false)
	waitFor(t, "the 40 batches", func() bool { return len(w.telemetryCounts()) == 40 })
	for k, n := range w.telemetryCounts() {
		if n != 1 {
			t.Errorf("agent %d seq %d written %d times", k[0], k[1], n)
		}
	}
	if d := metric(t, reg, "netmon_nats_dead_lettered_total", "kind", "telemetry"); d != 0 {
		t.Errorf("dead-lettered %v during an outage", d)
	}
	if r := metric(t, reg, "netmon_nats_redelivered_total", "kind", "telemetry"); r != 0 {
		t.Errorf("redelivered %v: the held batch used up deliveries", r)
	}
}

// TestRestartConsumesLeftover: what one queue left unacknowledged (its
// writes failing when it stopped) the next queue on the same stream
// writes, each record exactly once overall.
func TestRestartConsumesLeftover(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	w := newFakeWriter()
	w.fail = func(kind string, n int, agents []int64) error {
		for _, a := range agents {
			if a == 2 {
				return fmt.Errorf("connection reset")
			}
		}
		return nil
	}
	cfg := testConfig(s.ClientURL())
	cfg.MaxDeliver = 1000
	q1, _ := newQueue(t, cfg, w)
	publishTelemetry(t, q1, 1, 30)
	publishTelemetry(t, q1, 2, 30)
	if err := q1.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "agent 1", func() bool { return len(w.telemetryCounts()) == 30 })
	if err := q1.Stop(); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.fail = nil
	w.mu.Unlock()
	q2, _ := newQueue(t, cfg, w)
	if err := q2.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "agent 2", func() bool { return len(w.telemetryCounts()) == 60 })
	time.Sleep(500 * time.Millisecond) // an extra delivery would show now
	for k, n := range w.telemetryCounts() {
		if n != 1 {
			t.Errorf("agent %d seq %d written %d times", k[0], k[1], n)
		}
	}
	if p, err := q2.Pending(context.Background(), natsq.KindTelemetry); err != nil || p != 0 {
		t.Errorf("pending %d %v", p, err)
	}
}

// TestServerRestartLosesNothing: acknowledged publishes survive a clean
// server restart on the same store; the queue reconnects by itself.
func TestServerRestartLosesNothing(t *testing.T) {
	dir := t.TempDir()
	s := newServer(dir, -1)
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("not ready")
	}
	port := s.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port()
	w := newFakeWriter()
	q, _ := newQueue(t, testConfig(s.ClientURL()), w)
	publishTelemetry(t, q, 5, 100)
	s.Shutdown()
	s.WaitForShutdown()
	if q.PutTelemetry([]record.Telemetry{tel(5, 101)}) {
		t.Error("a publish with the server down was acknowledged")
	}
	startServer(t, dir, int(port))
	waitFor(t, "reconnect", func() bool { return q.Ready() == nil })
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the 100 batches", func() bool { return len(w.telemetryCounts()) == 100 })
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	for k, n := range w.telemetryCounts() {
		if n != 1 || k[1] > 100 {
			t.Errorf("agent %d seq %d written %d times", k[0], k[1], n)
		}
	}
}

// TestServerKilledLosesNothing: kill -9 of the nats-server process (a
// separate process, SyncAlways) after acknowledged publishes loses none
// of them. (A process kill leaves written pages to the kernel; the fsync
// of SyncAlways is what also covers a crash of the machine, which a test
// cannot stage.)
func TestServerKilledLosesNothing(t *testing.T) {
	dir := t.TempDir()
	probe := newServer(t.TempDir(), -1) // a free port for the child
	go probe.Start()
	probe.ReadyForConnections(10 * time.Second)
	port := int(probe.Addr().(interface{ AddrPort() netip.AddrPort }).AddrPort().Port())
	probe.Shutdown()
	probe.WaitForShutdown()

	child := childServer(t, dir, port)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	w := newFakeWriter()
	q, _ := newQueue(t, testConfig(url), w)
	publishTelemetry(t, q, 8, 200)
	if err := child.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	_ = child.Wait()
	childServer(t, dir, port)
	waitFor(t, "reconnect", func() bool { return q.Ready() == nil })
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the 200 batches", func() bool { return len(w.telemetryCounts()) == 200 })
	// Stopped while the server is up, so that the last acknowledgements
	// do not wait out their timeout in the cleanup.
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	for k, n := range w.telemetryCounts() {
		if n != 1 {
			t.Errorf("agent %d seq %d written %d times", k[0], k[1], n)
		}
	}
}

// TestSyslogSplitToMaxPayload: a collector's batch of 256 events of 8 KB
// (2 MB encoded, twice the server's max_payload) is published as several
// messages and every event is written once.
func TestSyslogSplitToMaxPayload(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	w := newFakeWriter()
	q, reg := newQueue(t, testConfig(s.ClientURL()), w)
	es := make([]record.SyslogEvent, 256)
	for i := range es {
		es[i] = record.SyslogEvent{TS: 1_800_000_000, Host: fmt.Sprintf("h%03d", i), Message: strings.Repeat("x", 8192)}
	}
	if !q.PutSyslog(es) {
		t.Fatal("not acknowledged")
	}
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "256 events", func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.syslog) >= 256 })
	time.Sleep(200 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	hosts := map[string]int{}
	for _, e := range w.syslog {
		hosts[e.Host]++
	}
	if len(w.syslog) != 256 || len(hosts) != 256 {
		t.Errorf("%d events, %d hosts; want 256 each once", len(w.syslog), len(hosts))
	}
	if p := metric(t, reg, "netmon_nats_published_total", "kind", "syslog"); p < 3 {
		t.Errorf("%v messages, want at least 3 (2 MB over a 1 MB max_payload)", p)
	}
}
