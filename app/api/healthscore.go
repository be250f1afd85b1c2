package api

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	dto "github.com/prometheus/client_model/go"

	"netmon/app/api/router"
	"netmon/store"
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

// healthTTL is how long a computed score is served (spec: about 30 s).
const healthTTL = 30 * time.Second

// Deduction rules: each capped, together at most 100.
const (
	critSeverity     = 8  // an open alert event of at least this severity is critical
	pointsPerCrit    = 10 // per open critical alert event, at most 40
	maxCritPoints    = 40
	maxOfflinePoints = 30 // times the share of agents offline
	capturePoints    = 10 // the hub capture reports an error
	queuePoints      = 10 // ingest records dropped since the previous computation
)

// dropCounters are the counters whose growth between two computations
// is a queue drop: records the ingest path, the flow collector and the
// agents' spools lost.
var dropCounters = []string{"netmon_ingest_dropped_total", "netmon_flow_records_dropped_total", "netmon_agent_spool_dropped_total"}

// healthCache keeps the last answer per site scope and the drop counters
// at the previous computation.
type healthCache struct {
	mu       sync.Mutex
	answers  map[string]NetworkHealth
	lastDrop float64
	haveDrop bool
}

func (s *Server) networkHealth(c *gin.Context, _ *router.NoInput) (NetworkHealth, error) {
	site := callerOf(c).SiteFilter()
	now := time.Now()
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	if s.health.answers == nil {
		s.health.answers = map[string]NetworkHealth{}
	}
	if h, ok := s.health.answers[site]; ok && now.Sub(time.Unix(h.ComputedAt, 0)) < healthTTL {
		return h, nil
	}
	h, err := s.computeHealth(c, site, now)
	if err != nil {
		return h, err
	}
	s.health.answers[site] = h
	return h, nil
}

func (s *Server) computeHealth(ctx context.Context, site string, now time.Time) (NetworkHealth, error) {
	h := NetworkHealth{Deductions: []Deduction{}, ComputedAt: now.Unix()}
	if s.deps.AlertStore != nil {
		evs, err := s.deps.AlertStore.ListAlertEvents(ctx, store.AlertFilter{Open: true, MinSeverity: critSeverity, SiteScope: site, Limit: maxCritPoints/pointsPerCrit + 1})
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
	if s.deps.Fleet != nil {
		agents, err := s.deps.Fleet.ListAgents(ctx, site)
		if err != nil {
			return h, err
		}
		off := 0
		for _, a := range agents {
			if !a.Online {
				off++
			}
		}
		if off > 0 {
			p := int(math.Round(float64(maxOfflinePoints*off) / float64(len(agents))))
			h.add("offline_agents", p, fmt.Sprintf("%d of %d agents offline (no telemetry within three intervals; %d points times the share offline)", off, len(agents), maxOfflinePoints))
		}
	}
	// The hub's capture and ingest serve every site: a site-bound caller
	// sees them too, they are its network's path as well.
	if s.deps.Capture != nil {
		snap := s.deps.Capture.Snapshot()
		if snap.Error != "" {
			h.add("capture_error", capturePoints, "the hub capture reports: "+snap.Error)
		}
		if seen := snap.TotalPackets + snap.Dropped; snap.Dropped > 0 && seen > 0 {
			share := float64(snap.Dropped) / float64(seen)
			p := 5
			if share >= 0.01 {
				p = 15
			}
			if share >= 0.001 {
				h.add("kernel_drops", p, fmt.Sprintf("the kernel dropped %d of %d packets (%.2f%%) since the capture started (5 points from 0.1%%, 15 from 1%%)", snap.Dropped, seen, 100*share))
			}
		}
	}
	if drops, ok := s.gatherSum(dropCounters); ok {
		if s.health.haveDrop && drops > s.health.lastDrop {
			h.add("queue_drops", queuePoints, fmt.Sprintf("%.0f ingest records dropped since the previous computation (queue full, store errors)", drops-s.health.lastDrop))
		}
		s.health.lastDrop, s.health.haveDrop = drops, true
	}
	h.Score = 100
	for _, d := range h.Deductions {
		h.Score -= d.Points
	}
	h.Score = max(h.Score, 0)
	return h, nil
}

func (h *NetworkHealth) add(reason string, points int, detail string) {
	if points > 0 {
		h.Deductions = append(h.Deductions, Deduction{Reason: reason, Points: points, Detail: detail})
	}
}

// gatherSum sums the counters named from the hub's registry.
func (s *Server) gatherSum(names []string) (float64, bool) {
	if s.deps.Metrics == nil {
		return 0, false
	}
	mfs, err := s.deps.Metrics.Gather()
	if err != nil {
		return 0, false
	}
	var sum float64
	for _, mf := range mfs {
		for _, n := range names {
			if mf.GetName() == n {
				sum += counterSum(mf.GetMetric())
			}
		}
	}
	return sum, true
}

func counterSum(ms []*dto.Metric) float64 {
	var s float64
	for _, m := range ms {
		if c := m.GetCounter(); c != nil {
			s += c.GetValue()
		}
	}
	return s
}
