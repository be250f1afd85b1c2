package agentmode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/agentmode/spool"
	"netmon/agentmode/state"
	"netmon/agentmode/wire"
)

func TestEnrollAndSend(t *testing.T) {
	hub := newFakeHub(t, nil)
	ta := startAgent(t, hub, t.TempDir(), nil, nil)
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	ta.tick(t)
	waitFor(t, "the second batch", func() bool { return len(hub.seenNow().batches) == 2 })

	seen := hub.seenNow()
	h := seen.hellos[0]
	st := ta.store.Get()
	want := wire.Hello{Name: "test-host", Site: "lab", Version: "test", ProtocolVersion: wire.ProtocolVersion,
		OS: runtime.GOOS, Arch: runtime.GOARCH, MachineID: st.MachineID}
	if diff := cmp.Diff(h, want); diff != "" {
		t.Errorf("hello (-got, +want):\n%s", diff)
	}
	if diff := cmp.Diff(seen.seqs(), []uint64{1, 2}); diff != "" {
		t.Errorf("seqs (-got, +want):\n%s", diff)
	}
	b := seen.batches[1]
	if b.TS != ta.clock.Now().Unix() || b.Version != "test" || b.AttrMethod != "off" || b.Dropped != 0 {
		t.Errorf("batch %+v", b)
	}
	if seen.bearers[0] != "agt_1" {
		t.Errorf("bearer %q", seen.bearers[0])
	}
	if st.AgentID != 1 || st.AgentToken != "agt_1" || st.NextSeq != 3 || st.HubURL != hub.URL() {
		t.Errorf("state %+v", st)
	}
}

func TestStartRefusesWithoutTokenOrIdentity(t *testing.T) {
	hub := newFakeHub(t, nil)
	ta := newAgent(t, hub, t.TempDir(), func(c *Config) { c.EnrollToken = "  " }, nil)
	err := ta.Start(context.Background())
	if !errors.Is(err, errNoEnrollToken) || !strings.Contains(err.Error(), "hub.token") {
		t.Fatalf("error %v", err)
	}
}

func TestBackoffScheduleAgainstHub(t *testing.T) {
	tests := []struct {
		desc        string
		script      []int // the hub's answers to the telemetry calls, 0 = accept
		ticks       int   // batches produced after the first
		wantBatches int
		want        []time.Duration
	}{
		{"five failures: base ×1 ×2 ×4 ×8 ×8", []int{503, 503, 503, 503, 503}, 0, 1,
			[]time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 4 * time.Minute}},
		{"Retry-After longer than the backoff wins", []int{429}, 0, 1, []time.Duration{time.Minute}},
		{"a success resets the schedule", []int{503, 503, 0, 0, 503}, 2, 3,
			[]time.Duration{30 * time.Second, time.Minute, 30 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			hub := newFakeHub(t, nil)
			hub.setScript(tt.script...)
			ta := startAgent(t, hub, t.TempDir(), nil, nil)
			for i := 0; i < tt.ticks; i++ {
				waitFor(t, "a delivery", func() bool { return len(hub.seenNow().batches) >= i+1 })
				ta.tick(t)
			}
			waitFor(t, "every delivery", func() bool { return len(hub.seenNow().batches) == tt.wantBatches })
			if diff := cmp.Diff(ta.backoff.got(), tt.want); diff != "" {
				t.Errorf("waits (-got, +want):\n%s", diff)
			}
		})
	}
}

func TestIntervalAdoption(t *testing.T) {
	hub := newFakeHub(t, nil)
	hub.ackInterval = 10
	ta := startAgent(t, hub, t.TempDir(), nil, nil)
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	waitFor(t, "the new interval", func() bool { return ta.intervalDuration() == 10*time.Second })
	// The wait begun before the answer (30 s) is recomputed with the hub's
	// 10 s: ten seconds later the second batch is due.
	waitFor(t, "the recomputed wait", func() bool { return len(ta.clock.afterCalls()) >= 2 })
	ta.clock.Advance(10 * time.Second)
	waitFor(t, "the second batch", func() bool { return len(hub.seenNow().batches) == 2 })
	ta.tick(t)
	waitFor(t, "the third batch", func() bool { return len(hub.seenNow().batches) == 3 })
	waitFor(t, "the next wait", func() bool { return len(ta.clock.afterCalls()) >= 3 })
	if diff := cmp.Diff(ta.clock.afterCalls()[:3], []time.Duration{30 * time.Second, 10 * time.Second, 10 * time.Second}); diff != "" {
		t.Errorf("producer waits (-got, +want):\n%s", diff)
	}
	if got := ta.store.Get().IntervalSeconds; got != 10 {
		t.Errorf("persisted interval %d, want 10", got)
	}
	// A restart produces at the hub's pace before it hears from the hub.
	if err := ta.Stop(); err != nil {
		t.Fatal(err)
	}
	dir := strings.TrimSuffix(ta.cfg.StatePath, DefaultStateFile)
	block := make(chan struct{}) // the hub does not answer this time
	hub.mu.Lock()
	hub.block = block
	hub.mu.Unlock()
	defer close(block)
	ta2 := startAgent(t, hub, dir, nil, nil)
	waitFor(t, "the first wait", func() bool { return len(ta2.clock.afterCalls()) >= 1 })
	if got := ta2.clock.afterCalls()[0]; got != 10*time.Second {
		t.Errorf("first wait after restart %v, want 10s", got)
	}
}

// queued reads the seqs in the offline queue file, leaving it as it is.
func queued(t *testing.T, path string) []uint64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if line == "" {
			continue
		}
		var b wire.Telemetry
		if err := json.Unmarshal([]byte(line), &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Seq)
	}
	return out
}

func TestOfflineQueueFlushesInOrderAfterRestart(t *testing.T) {
	hub := newFakeHub(t, nil)
	dir := t.TempDir()
	// Offline from the first batch on; the sender's backoff never ends.
	hub.setScript(503)
	bo := &backoffRecorder{hold: true, release: make(chan time.Time)}
	ta := startAgent(t, hub, dir, nil, bo)
	waitFor(t, "the first failure", func() bool { return len(bo.got()) == 1 })
	for i := 0; i < 4; i++ {
		ta.tick(t)
	}
	waitFor(t, "batches 2-5 on disk", func() bool { return ta.queue.Len() == 5 })
	if err := ta.Stop(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(queued(t, ta.files.Queue), []uint64{1, 2, 3, 4, 5}); diff != "" {
		t.Fatalf("queue after stop (-got, +want):\n%s", diff)
	}
	if len(hub.seenNow().batches) != 0 {
		t.Fatal("hub stored a batch while offline")
	}

	// Back online: the restarted agent sends the queue oldest first, then
	// its own new batch.
	ta2 := startAgent(t, hub, dir, nil, nil)
	t.Cleanup(func() { dumpLogs(t, ta2) })
	waitFor(t, "the flush", func() bool { return len(hub.seenNow().batches) == 6 })
	if diff := cmp.Diff(hub.seenNow().seqs(), []uint64{1, 2, 3, 4, 5, 6}); diff != "" {
		t.Errorf("delivery order (-got, +want):\n%s", diff)
	}
	waitFor(t, "the queue to empty", func() bool { return ta2.queue.Len() == 0 })
}

func TestFlushStopsAtFirstFailure(t *testing.T) {
	hub := newFakeHub(t, nil)
	dir := t.TempDir()
	hub.setScript(503)
	bo := &backoffRecorder{hold: true, release: make(chan time.Time)}
	ta := startAgent(t, hub, dir, nil, bo)
	waitFor(t, "the first failure", func() bool { return len(bo.got()) == 1 })
	ta.tick(t)
	ta.tick(t)
	waitFor(t, "three batches queued", func() bool { return ta.queue.Len() == 3 })
	// The retry delivers batch 1, then batch 2 fails: batch 3 is not tried.
	hub.setScript(0, 503)
	bo.release <- time.Time{}
	waitFor(t, "the second failure", func() bool { return len(bo.got()) == 2 })
	seen := hub.seenNow()
	if diff := cmp.Diff(seen.seqs(), []uint64{1}); diff != "" {
		t.Errorf("delivered (-got, +want):\n%s", diff)
	}
	if seen.calls != 3 {
		t.Errorf("%d telemetry calls, want 3 (fail, deliver 1, fail 2)", seen.calls)
	}
	if ta.queue.Len() != 2 {
		t.Errorf("queue holds %d, want 2", ta.queue.Len())
	}
}

func TestStopWritesInMemoryBatchesToQueue(t *testing.T) {
	hub := newFakeHub(t, nil)
	dir := t.TempDir()
	block := make(chan struct{})
	hub.mu.Lock()
	hub.block = block
	hub.mu.Unlock()
	defer close(block)
	ta := startAgent(t, hub, dir, nil, nil)
	waitFor(t, "enrollment", func() bool { return ta.store.Get().Enrolled() })
	// Batch 1 is in flight (the hub does not answer); 2 and 3 wait in memory.
	ta.tick(t)
	ta.tick(t)
	waitFor(t, "three batches in memory", func() bool {
		ta.mu.Lock()
		defer ta.mu.Unlock()
		return len(ta.mem) == 3
	})
	if err := ta.Stop(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(queued(t, ta.files.Queue), []uint64{1, 2, 3}); diff != "" {
		t.Errorf("queue after stop (-got, +want):\n%s", diff)
	}
}

func TestDroppedBatchesReported(t *testing.T) {
	hub := newFakeHub(t, nil)
	hub.register("agt_7", 7)
	dir := t.TempDir()
	statePath := dir + "/" + DefaultStateFile
	// An enrolled agent whose queue is already full.
	st, err := state.Open(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Update(func(s *state.State) { s.AgentID, s.AgentToken, s.NextSeq = 7, "agt_7", 101 }); err != nil {
		t.Fatal(err)
	}
	q, _, _, err := spool.Open(state.FilesFor(statePath).Queue, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= spool.Max; i++ {
		raw, _ := json.Marshal(wire.Telemetry{Seq: uint64(i), TS: 1, Interfaces: []wire.Interface{}, Connections: []wire.Connection{}})
		if _, err := q.Push(raw); err != nil {
			t.Fatal(err)
		}
	}
	_ = q.Close()

	hub.setScript(503)
	bo := &backoffRecorder{hold: true, release: make(chan time.Time)}
	ta := startAgent(t, hub, dir, nil, bo)
	waitFor(t, "the failure", func() bool { return len(bo.got()) == 1 })
	ta.tick(t) // batch 102: the queue drops 1 and 2
	waitFor(t, "two drops", func() bool { return ta.store.Get().Dropped == 2 })
	bo.release <- time.Time{}
	waitFor(t, "the flush", func() bool { return len(hub.seenNow().batches) == spool.Max })
	seen := hub.seenNow()
	if seen.batches[0].Seq != 3 || seen.batches[0].Dropped != 2 {
		t.Errorf("first delivered batch seq %d dropped %d, want 3 2", seen.batches[0].Seq, seen.batches[0].Dropped)
	}
	if seen.batches[1].Dropped != 0 {
		t.Errorf("second batch reports dropped %d again", seen.batches[1].Dropped)
	}
	if got := ta.store.Get().Dropped; got != 0 {
		t.Errorf("dropped count %d after reporting, want 0", got)
	}
	if want := fmt.Sprint(uint64(102)); fmt.Sprint(seen.batches[len(seen.batches)-1].Seq) != want {
		t.Errorf("last batch seq %d, want %s", seen.batches[len(seen.batches)-1].Seq, want)
	}
}

func TestUnreachableHubQueuesEverything(t *testing.T) {
	hub := newFakeHub(t, nil)
	url := hub.URL()
	hub.srv.Close()
	bo := &backoffRecorder{hold: true, release: make(chan time.Time)}
	ta := startAgent(t, hub, t.TempDir(), func(c *Config) { c.HubURL = url }, bo)
	waitFor(t, "the first failure", func() bool { return len(bo.got()) == 1 })
	ta.tick(t)
	waitFor(t, "two batches queued", func() bool { return ta.queue.Len() == 2 })
	if !strings.Contains(ta.logs.String(), "enrollment failed") {
		t.Errorf("no enrollment failure logged:\n%s", ta.logs.String())
	}
}

func TestFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX modes")
	}
	hub := newFakeHub(t, newTestCA(t, "hub CA"))
	ta := startAgent(t, hub, t.TempDir(), nil, nil)
	t.Cleanup(func() { dumpLogs(t, ta) })
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	for _, p := range []string{ta.cfg.StatePath, ta.files.Cert, ta.files.Key, ta.files.CA, ta.files.Queue} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
	}
}

func dumpLogs(t *testing.T, ta *testAgent) {
	t.Helper()
	if !t.Failed() {
		return
	}
	lines := strings.Split(strings.TrimSpace(ta.logs.String()), "\n")
	if len(lines) > 20 {
		lines = append(lines[:10], lines[len(lines)-10:]...)
	}
	t.Log(strings.Join(lines, "\n"))
}
