// Package health is the network health score (GET /api/v1/health): 100
// less deductions for open critical alert events, offline agents, the
// hub capture's errors and kernel drops, and ingest records dropped. It
// sits beside the alert engine and reads typed counts from the owners of
// the data (the alert store, the fleet, the capture, the ingest path),
// never metric names; app/api only translates.
package health

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"netmon/store"
	"netmon/store/record"
)

// NetworkHealth is the body of GET /api/v1/health: 100 less the
// deductions, each with its reason.
type NetworkHealth struct {
	Score      int         `json:"score" jsonschema:"minimum=0,maximum=100"`
	Deductions []Deduction `json:"deductions"`
	// ComputedAt is when the score was computed (Unix seconds); answers
	// are cached for 30 s per site scope.
	ComputedAt int64 `json:"computed_at"`
}

// Deduction is one reason the score is below 100.
type Deduction struct {
	// Reason is critical_alerts, offline_agents, kernel_drops,
	// capture_error or queue_drops.
	Reason string `json:"reason" jsonschema:"enum=critical_alerts,enum=offline_agents,enum=kernel_drops,enum=capture_error,enum=queue_drops"`
	Points int    `json:"points"`
	// Detail says what was counted, for people.
	Detail string `json:"detail"`
}

// TTL is how long a computed score is served (spec: about 30 s); it is
// also the window the queue drops are counted over.
const TTL = 30 * time.Second

// Deduction rules: each capped, together at most 100.
const (
	critSeverity     = 8  // an open alert event of at least this severity is critical
	pointsPerCrit    = 10 // per open critical alert event, at most 40
	maxCritPoints    = 40
	maxOfflinePoints = 30 // times the share of agents offline
	capturePoints    = 10 // the hub capture reports an error
	queuePoints      = 10 // ingest records dropped in the last window
)

// Alerts lists alert events (*store.DB).
type Alerts interface {
	ListAlertEvents(ctx context.Context, f store.AlertFilter) ([]record.AlertEvent, error)
}

// Agents counts the agents of a site scope ("" = all) and those offline
// (*fleet.Service).
type Agents interface {
	AgentCounts(ctx context.Context, site string) (total, offline int, err error)
}

// Capture is the hub capture's state (*capture.Capture): the error it
// reports ("" = none), the packets it read and those the kernel dropped
// since it started.
type Capture interface {
	Health() (errText string, packets, dropped int64)
}

// Dropper is one owner of an ingest path that counts the records it lost
// (the queue, the flow collector, the agents' spools through the fleet).
type Dropper interface {
	Dropped() uint64
}

// Deps are the score's inputs; a nil one deducts nothing.
type Deps struct {
	Alerts  Alerts
	Agents  Agents
	Capture Capture
	Drops   []Dropper
}

// Service computes the score and caches it per site scope. The queue
// drops are counted over fixed windows of the service's own, the same
// for every caller: a caller asking does not move another's baseline.
type Service struct {
	dep Deps

	mu      sync.Mutex
	answers map[string]NetworkHealth
	// drops sampled at the start of the current and previous windows.
	cur, prev uint64
	curAt     time.Time
	havePrev  bool
}

// New returns the service; it does no I/O.
func New(deps Deps) *Service {
	return &Service{dep: deps, answers: map[string]NetworkHealth{}}
}

// Score returns the score of site ("" = every site), computed at most
// once per TTL per site.
func (s *Service) Score(ctx context.Context, site string) (NetworkHealth, error) {
	return s.scoreAt(ctx, site, time.Now())
}

func (s *Service) scoreAt(ctx context.Context, site string, now time.Time) (NetworkHealth, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.answers[site]; ok && now.Sub(time.Unix(h.ComputedAt, 0)) < TTL {
		return h, nil
	}
	h, err := s.compute(ctx, site, now)
	if err != nil {
		return h, err
	}
	s.answers[site] = h
	return h, nil
}

func (s *Service) compute(ctx context.Context, site string, now time.Time) (NetworkHealth, error) {
	h := NetworkHealth{Deductions: []Deduction{}, ComputedAt: now.Unix()}
	if s.dep.Alerts != nil {
		evs, err := s.dep.Alerts.ListAlertEvents(ctx, store.AlertFilter{Open: true, MinSeverity: critSeverity, SiteScope: site, Limit: maxCritPoints/pointsPerCrit + 1})
		if err != nil {
			return h, err
		}
		if n := len(evs); n > 0 {
			more := ""
			if n*pointsPerCrit > maxCritPoints {
				more = " or more"
			}
			h.add("critical_alerts", min(n*pointsPerCrit, maxCritPoints),
				fmt.Sprintf("%d%s open alert events of severity %d or above (%d points each, at most %d)", min(n, maxCritPoints/pointsPerCrit), more, critSeverity, pointsPerCrit, maxCritPoints))
		}
	}
	if s.dep.Agents != nil {
		total, off, err := s.dep.Agents.AgentCounts(ctx, site)
		if err != nil {
			return h, err
		}
		if off > 0 && total > 0 {
			p := int(math.Round(float64(maxOfflinePoints*off) / float64(total)))
			h.add("offline_agents", p, fmt.Sprintf("%d of %d agents offline (no telemetry within three intervals; %d points times the share offline)", off, total, maxOfflinePoints))
		}
	}
	// The hub's capture and ingest serve every site: a site-bound caller
	// sees them too, they are its network's path as well.
	if s.dep.Capture != nil {
		errText, packets, dropped := s.dep.Capture.Health()
		if errText != "" {
			h.add("capture_error", capturePoints, "the hub capture reports: "+errText)
		}
		if seen := packets + dropped; dropped > 0 && seen > 0 {
			share := float64(dropped) / float64(seen)
			p := 5
			if share >= 0.01 {
				p = 15
			}
			if share >= 0.001 {
				h.add("kernel_drops", p, fmt.Sprintf("the kernel dropped %d of %d packets (%.2f%%) since the capture started (5 points from 0.1%%, 15 from 1%%)", dropped, seen, 100*share))
			}
		}
	}
	if n := s.queueDrops(now); n > 0 {
		h.add("queue_drops", queuePoints, fmt.Sprintf("%d ingest records dropped since the previous computation (queue full, store errors)", n))
	}
	h.Score = 100
	for _, d := range h.Deductions {
		h.Score -= d.Points
	}
	h.Score = max(h.Score, 0)
	return h, nil
}

// queueDrops returns the records dropped during the last whole window:
// the drop total is sampled when a window of TTL has passed since the
// last sample, and every computation until the next sample sees the same
// difference, whichever site asks.
func (s *Service) queueDrops(now time.Time) uint64 {
	if len(s.dep.Drops) == 0 {
		return 0
	}
	if s.curAt.IsZero() || now.Sub(s.curAt) >= TTL {
		var total uint64
		for _, d := range s.dep.Drops {
			total += d.Dropped()
		}
		s.prev, s.havePrev = s.cur, !s.curAt.IsZero()
		s.cur, s.curAt = total, now
	}
	if !s.havePrev || s.cur <= s.prev {
		return 0
	}
	return s.cur - s.prev
}

func (h *NetworkHealth) add(reason string, points int, detail string) {
	if points > 0 {
		h.Deductions = append(h.Deductions, Deduction{Reason: reason, Points: points, Detail: detail})
	}
}
