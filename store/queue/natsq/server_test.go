package natsq_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/prometheus/client_golang/prometheus"

	"netmon/store/queue/natsq"
	"netmon/store/record"
)

// childEnv, when set to "dir port", makes the test binary a nats-server
// (v2.15.2, the version embedded in it) on 127.0.0.1:port storing in dir,
// so that a test can kill it with SIGKILL: an in-process server can only
// be shut down cleanly.
const childEnv = "NETMON_NATSQ_CHILD_SERVER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		dir, port, _ := strings.Cut(spec, " ")
		p, _ := strconv.Atoi(port)
		s := newServer(dir, p)
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			fmt.Println("not ready")
			os.Exit(1)
		}
		fmt.Println("ready")
		select {}
	}
	os.Exit(m.Run())
}

// newServer is a JetStream server storing in dir with sync_interval:
// always (SyncAlways: every write is fsynced before it is acknowledged),
// the setting netmon requires of a NATS server.
func newServer(dir string, port int) *server.Server {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir,
		SyncAlways: true, NoLog: true, NoSigs: true})
	if err != nil {
		panic(err)
	}
	return s
}

// startServer runs an in-process server on port (-1: any free port) and
// shuts it down at the end of the test.
func startServer(t *testing.T, dir string, port int) *server.Server {
	t.Helper()
	s := newServer(dir, port)
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// childServer runs the test binary as a nats-server on port storing in
// dir and returns it running; the test kills it.
func childServer(t *testing.T, dir string, port int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir+" "+strconv.Itoa(port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("child nats-server: %q %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return cmd
}

// testConfig is a Config for url with short delays.
func testConfig(url string) natsq.Config {
	return natsq.Config{URL: url, Workers: 2, RetryDelay: 200 * time.Millisecond, AckWait: 5 * time.Second,
		FetchWait: 200 * time.Millisecond, ReconnectWait: 50 * time.Millisecond, PublishTimeout: 2 * time.Second}
}

func newQueue(t *testing.T, cfg natsq.Config, w natsq.Writer) (*natsq.Queue, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	q, err := natsq.New(slog.New(slog.DiscardHandler), cfg, w, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Stop() })
	return q, reg
}

// metric is the value of the series name{labels} in reg (0 when absent).
func metric(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, lp := range m.GetLabel() {
				have[lp.GetName()] = lp.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

// fakeWriter records what is written and fails on demand.
type fakeWriter struct {
	mu sync.Mutex
	// fail, when set, decides whether a write of these records fails
	// (nothing of it committed).
	fail      func(kind string, n int, agents []int64) error
	telemetry map[[2]int64]int // (agent, seq) -> times written
	deep      map[[2]int64]int
	syslog    []record.SyslogEvent
	calls     int
	// down makes every write and Ping fail: the database is gone.
	down atomic.Bool
}

// Ping fails while the database is down (natsq.Pinger).
func (w *fakeWriter) Ping(context.Context) error {
	if w.down.Load() {
		return errDown
	}
	return nil
}

func newFakeWriter() *fakeWriter {
	return &fakeWriter{telemetry: map[[2]int64]int{}, deep: map[[2]int64]int{}}
}

func (w *fakeWriter) check(kind string, n int, agents []int64) error {
	w.calls++
	if w.down.Load() {
		return errDown
	}
	if w.fail != nil {
		return w.fail(kind, n, agents)
	}
	return nil
}

func (w *fakeWriter) WriteSyslog(_ context.Context, es []record.SyslogEvent) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(natsq.KindSyslog, len(es), nil); err != nil {
		return 0, err
	}
	w.syslog = append(w.syslog, es...)
	return len(es), nil
}

func (w *fakeWriter) WriteTelemetry(_ context.Context, ts []record.Telemetry) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var agents []int64
	for _, t := range ts {
		agents = append(agents, t.AgentID)
	}
	if err := w.check(natsq.KindTelemetry, len(ts), agents); err != nil {
		return 0, err
	}
	for _, t := range ts {
		w.telemetry[[2]int64{t.AgentID, int64(t.Seq)}]++
	}
	return len(ts), nil
}

func (w *fakeWriter) WriteDeep(_ context.Context, ds []record.Deep) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var agents []int64
	for _, d := range ds {
		agents = append(agents, d.AgentID)
	}
	if err := w.check(natsq.KindDeep, len(ds), agents); err != nil {
		return 0, err
	}
	for _, d := range ds {
		w.deep[[2]int64{d.AgentID, int64(d.Seq)}]++
	}
	return len(ds), nil
}

// telemetryCounts returns a copy of the telemetry written.
func (w *fakeWriter) telemetryCounts() map[[2]int64]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := make(map[[2]int64]int, len(w.telemetry))
	for k, v := range w.telemetry {
		m[k] = v
	}
	return m
}

// waitFor polls cond until it holds or 15 s passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tel(agent int64, seq uint64) record.Telemetry {
	return record.Telemetry{AgentID: agent, Seq: seq, TS: 1_800_000_000 + int64(seq), In: float64(seq), HasRates: true,
		Rates: []byte(`[]`), Counters: []byte(`[]`), Connections: []byte(`[]`)}
}

// publishTelemetry publishes seqs 1..n of agent and fails the test when
// one is not acknowledged.
func publishTelemetry(t *testing.T, q *natsq.Queue, agent int64, n int) {
	t.Helper()
	for s := 1; s <= n; s++ {
		if !q.PutTelemetry([]record.Telemetry{tel(agent, uint64(s))}) {
			t.Fatalf("publish agent %d seq %d not acknowledged", agent, s)
		}
	}
}

var (
	errPoison = errors.New("poison: value out of range")
	errDown   = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
)
