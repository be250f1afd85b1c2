package health

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
)

type drops struct{ n uint64 }

func (d *drops) Dropped() uint64 { return d.n }

type agents map[string][2]int // site: total, offline

func (a agents) AgentCounts(_ context.Context, site string) (int, int, error) {
	c := a[site]
	return c[0], c[1], nil
}

type alerts int // open critical events, in every scope

func (a alerts) ListAlertEvents(_ context.Context, f store.AlertFilter) ([]record.AlertEvent, error) {
	return make([]record.AlertEvent, min(int(a), f.Limit)), nil
}

type capt struct {
	err              string
	packets, dropped int64
}

func (c capt) Health() (string, int64, int64) { return c.err, c.packets, c.dropped }

// TestQueueDrops: records dropped between two windows deduct
// queue_drops with their count; the first computation only takes the
// baseline, no growth deducts nothing, and a second site asking in the
// same window sees the same count (no caller moves another's baseline).
func TestQueueDrops(t *testing.T) {
	a, b := &drops{n: 5}, &drops{}
	s := New(Deps{Drops: []Dropper{a, b}})
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	h, err := s.scoreAt(ctx, "", now)
	if err != nil || h.Score != 100 || len(h.Deductions) != 0 {
		t.Fatalf("baseline: %+v, %v", h, err)
	}
	a.n, b.n = 8, 4
	want := NetworkHealth{Score: 90, ComputedAt: now.Unix() + 30, Deductions: []Deduction{
		{Reason: "queue_drops", Points: 10, Detail: "7 ingest records dropped since the previous computation (queue full, store errors)"}}}
	for _, site := range []string{"", "b"} {
		h, err = s.scoreAt(ctx, site, now.Add(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(h, want); diff != "" {
			t.Errorf("site %q after drops (-got, +want):\n%s", site, diff)
		}
	}
	if h, _ = s.scoreAt(ctx, "", now.Add(time.Minute)); h.Score != 100 {
		t.Errorf("no new drops: %+v", h)
	}
}

// TestScore: exact deductions of each input, capped, and the cache.
func TestScore(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tests := []struct {
		desc string
		deps Deps
		site string
		want NetworkHealth
	}{
		{desc: "nothing wrong", deps: Deps{Alerts: alerts(0), Agents: agents{"": {3, 0}}, Capture: capt{packets: 10}},
			want: NetworkHealth{Score: 100, Deductions: []Deduction{}}},
		{desc: "critical alerts capped at 40", deps: Deps{Alerts: alerts(7)},
			want: NetworkHealth{Score: 60, Deductions: []Deduction{{Reason: "critical_alerts", Points: 40,
				Detail: "4 or more open alert events of severity 8 or above (10 points each, at most 40)"}}}},
		{desc: "offline share of the site", deps: Deps{Agents: agents{"a": {2, 1}}}, site: "a",
			want: NetworkHealth{Score: 85, Deductions: []Deduction{{Reason: "offline_agents", Points: 15,
				Detail: "1 of 2 agents offline (no telemetry within three intervals; 30 points times the share offline)"}}}},
		{desc: "capture error and 1% kernel drops", deps: Deps{Capture: capt{err: "no device", packets: 99, dropped: 1}},
			want: NetworkHealth{Score: 75, Deductions: []Deduction{
				{Reason: "capture_error", Points: 10, Detail: "the hub capture reports: no device"},
				{Reason: "kernel_drops", Points: 15, Detail: "the kernel dropped 1 of 100 packets (1.00%) since the capture started (5 points from 0.1%, 15 from 1%)"}}}},
		{desc: "kernel drops under 0.1%: nothing", deps: Deps{Capture: capt{packets: 9999, dropped: 1}},
			want: NetworkHealth{Score: 100, Deductions: []Deduction{}}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			h, err := New(tt.deps).scoreAt(context.Background(), tt.site, now)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.ComputedAt = now.Unix()
			if diff := cmp.Diff(h, tt.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
	// Cached for TTL per site.
	n := alerts(1)
	s := New(Deps{Alerts: &n})
	first, _ := s.scoreAt(context.Background(), "", now)
	n = 3
	if h, _ := s.scoreAt(context.Background(), "", now.Add(TTL-time.Second)); h.Score != first.Score || h.ComputedAt != first.ComputedAt {
		t.Errorf("within TTL: %+v, want the cached %+v", h, first)
	}
	if h, _ := s.scoreAt(context.Background(), "", now.Add(TTL)); h.Score != 70 {
		t.Errorf("after TTL: score %d, want 70", h.Score)
	}
}
