package api

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

// TestHealthQueueDrops: records dropped between two computations deduct
// queue_drops with their count; the first computation only takes the
// baseline, and no growth deducts nothing.
func TestHealthQueueDrops(t *testing.T) {
	s, _ := newTestServer(t, nil, nil)
	reg := prometheus.NewRegistry()
	drops := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_ingest_dropped_total", Help: "x"}, []string{"kind"})
	flows := prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_flow_records_dropped_total", Help: "x"})
	reg.MustRegister(drops, flows)
	s.deps.Metrics = reg
	drops.WithLabelValues("syslog").Add(5)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	h, err := s.computeHealth(ctx, "", now)
	if err != nil || h.Score != 100 || len(h.Deductions) != 0 {
		t.Fatalf("baseline: %+v, %v", h, err)
	}
	drops.WithLabelValues("flow").Add(3)
	flows.Add(4)
	h, err = s.computeHealth(ctx, "", now.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want := NetworkHealth{Score: 90, ComputedAt: now.Unix() + 30, Deductions: []Deduction{
		{Reason: "queue_drops", Points: 10, Detail: "7 ingest records dropped since the previous computation (queue full, store errors)"}}}
	if diff := cmp.Diff(h, want); diff != "" {
		t.Errorf("after drops (-got, +want):\n%s", diff)
	}
	if h, _ = s.computeHealth(ctx, "", now.Add(time.Minute)); h.Score != 100 {
		t.Errorf("no new drops: %+v", h)
	}
}
