package agentmode

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReenrollAfterThreeUnauthorized(t *testing.T) {
	hub := newFakeHub(t, nil)
	hub.setScript(0) // batch 1 goes through under the first identity
	ta := startAgent(t, hub, t.TempDir(), nil, nil)
	t.Cleanup(func() { dumpLogs(t, ta) })
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	machine := ta.store.Get().MachineID

	hub.forget(1) // an operator deleted the agent on the hub
	ta.tick(t)
	waitFor(t, "the batch under the new identity", func() bool { return len(hub.seenNow().batches) == 2 })

	seen := hub.seenNow()
	if seen.unauth != 3 {
		t.Errorf("%d 401s before re-enrolling, want exactly 3", seen.unauth)
	}
	if len(seen.hellos) != 2 || seen.hellos[1].MachineID != machine {
		t.Fatalf("hellos %+v, want a second one with machine id %s", seen.hellos, machine)
	}
	if diff := cmp.Diff(seen.bearers, []string{"agt_1", "agt_2"}); diff != "" {
		t.Errorf("bearers (-got, +want):\n%s", diff)
	}
	if diff := cmp.Diff(seen.seqs(), []uint64{1, 2}); diff != "" {
		t.Errorf("seqs (-got, +want):\n%s", diff)
	}
	st := ta.store.Get()
	if st.AgentID != 2 || st.AgentToken != "agt_2" || st.Unauthorized != 0 || st.MachineID != machine {
		t.Errorf("state %+v", st)
	}
	// Two backoffs (after the first and second 401), none after the third.
	if diff := cmp.Diff(ta.backoff.got(), []time.Duration{30 * time.Second, time.Minute}); diff != "" {
		t.Errorf("waits (-got, +want):\n%s", diff)
	}
}

func TestUnauthorizedStreakSurvivesRestart(t *testing.T) {
	hub := newFakeHub(t, nil)
	dir := t.TempDir()
	bo := &backoffRecorder{hold: true, release: make(chan time.Time)}
	ta := startAgent(t, hub, dir, nil, bo)
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	hub.forget(1)
	ta.tick(t)
	waitFor(t, "the first 401", func() bool { return len(bo.got()) == 1 })
	bo.release <- time.Time{}
	waitFor(t, "the second 401", func() bool { return len(bo.got()) == 2 })
	if err := ta.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := ta.store.Get().Unauthorized; got != 2 {
		t.Fatalf("persisted streak %d, want 2", got)
	}

	// After the restart one more 401 completes the streak.
	ta2 := startAgent(t, hub, dir, nil, nil)
	t.Cleanup(func() { dumpLogs(t, ta2) })
	waitFor(t, "re-enrollment and delivery", func() bool { return len(hub.seenNow().batches) == 3 })
	seen := hub.seenNow()
	if seen.unauth != 3 || len(seen.hellos) != 2 {
		t.Errorf("%d 401s and %d hellos, want 3 and 2", seen.unauth, len(seen.hellos))
	}
	if len(ta2.backoff.got()) != 0 {
		t.Errorf("restarted agent backed off %v before re-enrolling, want not at all", ta2.backoff.got())
	}
}

func TestUnauthorizedStreakResetOnSuccess(t *testing.T) {
	hub := newFakeHub(t, nil)
	hub.setScript(401, 401) // two refusals, then the token works again
	ta := startAgent(t, hub, t.TempDir(), nil, nil)
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	waitFor(t, "the streak reset", func() bool { return ta.store.Get().Unauthorized == 0 })
	hub.setScript(401, 401)
	ta.tick(t)
	waitFor(t, "the second batch", func() bool { return len(hub.seenNow().batches) == 2 })
	// 2 + 2 refusals never made three in a row: no re-enrollment.
	if n := len(hub.seenNow().hellos); n != 1 {
		t.Errorf("%d hellos, want 1", n)
	}
}

func TestNoReenrollWithoutToken(t *testing.T) {
	hub := newFakeHub(t, nil)
	dir := t.TempDir()
	ta := startAgent(t, hub, dir, nil, nil)
	waitFor(t, "the first batch", func() bool { return len(hub.seenNow().batches) == 1 })
	if err := ta.Stop(); err != nil {
		t.Fatal(err)
	}
	// Restarted from its state file without an enroll token.
	hub.forget(1)
	bo := &backoffRecorder{}
	ta2 := startAgent(t, hub, dir, func(c *Config) { c.EnrollToken = "" }, bo)
	waitFor(t, "five refusals", func() bool { return hub.seenNow().unauth >= 5 })
	if n := len(hub.seenNow().hellos); n != 1 {
		t.Errorf("%d hellos, want 1 (no re-enrollment without a token)", n)
	}
	logs := ta2.logs.String()
	if !strings.Contains(logs, `"level":"ERROR"`) || !strings.Contains(logs, "re-enrollment needs hub.token") {
		t.Errorf("no error log naming hub.token:\n%s", logs[:min(len(logs), 2000)])
	}
	// It keeps retrying with backoff.
	if got := bo.got(); len(got) < 4 || got[0] != 30*time.Second || got[3] != 4*time.Minute {
		t.Errorf("waits %v", got)
	}
}
