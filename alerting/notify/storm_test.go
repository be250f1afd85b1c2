package notify

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store/record"
	"netmon/store/storetest"
)

// TestStormKeepsOtherSources: agent 7 floods 20 000 events while the
// queue holds 100; then agent 9 raises one severity-8 event. Agent 9's
// event is delivered exactly once to a real local webhook; agent 7's
// storm costs the receiver its burst of 5 and one digest saying how many
// more there were; every event that never reached routing is counted by
// reason (19 900 of the storm's own, 1 evicted to make room for agent 9).
func TestStormKeepsOtherSources(t *testing.T) {
	db := storetest.OpenSQLite(t)
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	cfg := testConfig()
	cfg.QueueSize, cfg.RateBurst, cfg.RateEvery, cfg.DigestEvery = 100, 5, time.Hour, 300*time.Millisecond
	box := newBox(Settings{GenericURL: srv.URL + "/hook"})
	n := New(storetest.Logger(t), cfg, Deps{Store: db, Settings: box.get, Guard: loopGuard}, nil)

	storm := record.AlertEvent{Kind: "ioc", Severity: 8, State: record.AlertFiring, AgentID: 7, Count: 1, TS: fixed.Unix(), LastTS: fixed.Unix()}
	for i := int64(1); i <= 20000; i++ {
		ev := storm
		ev.ID, ev.Key, ev.Message = i, "7|x.test", "storm"
		n.Offer(ev)
	}
	other := record.AlertEvent{ID: 99999, Kind: "ioc", Key: "9|bad.example", Severity: 8, State: record.AlertFiring, AgentID: 9,
		Count: 1, Message: "agent 9 saw bad.example", TS: fixed.Unix(), LastTS: fixed.Unix()}
	if !n.Offer(other) {
		t.Fatal("agent 9's event was refused by a queue full of agent 7's")
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })

	// 5 of the storm, agent 9's event, one digest.
	deadline := time.Now().Add(10 * time.Second)
	for len(rec.requests()) < 7 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(4 * cfg.DigestEvery) // nothing more may come
	got := rec.requests()
	var ids []int64
	var digests []record.AlertEvent
	for _, r := range got {
		var ev record.AlertEvent
		if err := json.Unmarshal(r.Body, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Kind == KindDigest {
			digests = append(digests, ev)
			continue
		}
		ids = append(ids, ev.ID)
	}
	if len(got) != 7 {
		t.Fatalf("the webhook got %d requests, want 7 (5 of the storm, 1 of agent 9, 1 digest): ids %v, digests %+v", len(got), ids, digests)
	}
	nine := 0
	for _, id := range ids {
		if id == other.ID {
			nine++
		}
	}
	if nine != 1 {
		t.Errorf("agent 9's event delivered %d times, want 1 (ids %v)", nine, ids)
	}
	if len(digests) != 1 || digests[0].Count != 94 || digests[0].AgentID != 7 ||
		!strings.HasPrefix(digests[0].Message, "and 94 more ioc alerts from agent 7 since ") {
		t.Errorf("digests %+v, want one of agent 7 counting 94", digests)
	}
	for reason, want := range map[string]float64{DropSourceShare: 19900, DropFairShare: 1} {
		if got := testutil.ToFloat64(n.m.dropped.WithLabelValues(reason)); got != want {
			t.Errorf("dropped{reason=%q} = %v, want %v", reason, got, want)
		}
	}
	if got := testutil.ToFloat64(n.m.digested.WithLabelValues(GenericURL)); got != 94 {
		t.Errorf("digested = %v, want 94", got)
	}
}

// TestFairQueue: the queue serves sources in turn, highest severity first
// within each; full, it evicts from the largest source and never a higher
// severity for a storm's own event.
func TestFairQueue(t *testing.T) {
	ev := func(agent int64, sev int, id int64) record.AlertEvent {
		return record.AlertEvent{ID: id, AgentID: agent, Kind: "port", Severity: sev}
	}
	q := newFairQueue(4)
	for i, e := range []record.AlertEvent{ev(1, 4, 1), ev(1, 9, 2), ev(1, 4, 3), ev(2, 5, 4)} {
		if ok, dropped := q.push(e); !ok || dropped != "" {
			t.Fatalf("push %d: %v %q", i, ok, dropped)
		}
	}
	steps := []struct {
		desc    string
		ev      record.AlertEvent
		queued  bool
		dropped string
	}{
		{"the largest source's own event of its lowest severity is dropped", ev(1, 4, 5), false, DropSourceShare},
		{"the largest source's higher severity displaces its own lowest", ev(1, 9, 6), true, DropSourceShare},
		{"another source's event evicts the largest's lowest", ev(3, 1, 7), true, DropFairShare},
	}
	for _, s := range steps {
		ok, dropped := q.push(s.ev)
		if ok != s.queued || dropped != s.dropped {
			t.Errorf("%s: got (%v, %q), want (%v, %q)", s.desc, ok, dropped, s.queued, s.dropped)
		}
	}
	var order []int64
	for _, e := range q.take(nil, 10) {
		order = append(order, e.ID)
	}
	// Left: agent 1 {2 (9), 6 (9)}, agent 2 {4}, agent 3 {7}; in turn.
	want := []int64{2, 4, 7, 6}
	if !slices.Equal(order, want) {
		t.Errorf("taken %v, want %v", order, want)
	}
	if q.len() != 0 {
		t.Errorf("%d left", q.len())
	}
}

// TestIntakeSurvivesPanic: a routing pass that panics (here the settings
// read) is counted with the events it held; the next event is routed and
// delivered (RELIABILITY case 33).
func TestIntakeSurvivesPanic(t *testing.T) {
	db := storetest.OpenSQLite(t)
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	box := newBox(Settings{GenericURL: srv.URL + "/hook"})
	var calls atomic.Int32
	settings := func() Settings {
		if calls.Add(1) == 1 {
			// An index out of range: a real runtime panic.
			_ = []int{}[int(calls.Load())]
		}
		return box.get()
	}
	n := New(storetest.Logger(t), testConfig(), Deps{Store: db, Settings: settings, Guard: loopGuard}, nil)
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	first, second := portEvent, portEvent
	second.ID = 43
	n.Offer(first)
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(n.m.panics.WithLabelValues("intake")) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	n.Offer(second)
	waitDeliveries(t, db, record.DeliveryDelivered, 1, 5*time.Second)
	if got := testutil.ToFloat64(n.m.panics.WithLabelValues("intake")); got != 1 {
		t.Errorf("panics{intake} = %v, want 1", got)
	}
	if got := testutil.ToFloat64(n.m.dropped.WithLabelValues(DropPanic)); got != 1 {
		t.Errorf("dropped{panic} = %v, want 1", got)
	}
	if got := rec.requests(); len(got) != 1 || !strings.Contains(string(got[0].Body), `"id":43`) {
		t.Errorf("the webhook got %d requests, want the second event once", len(got))
	}
}
