package alerting

import (
	"context"
	"fmt"
	"time"

	"netmon/alerting/anomaly"
	"netmon/alerting/rules"
)

// KindAnomaly is the seasonal baseline rule of spec 6.3.
const KindAnomaly = "anomaly"

// Severities of anomaly: 6 (spec 6.3); crit (|z| at least crit_z) 9.
const (
	SeverityAnomaly     = 6
	SeverityAnomalyCrit = 9
)

// SeriesRef is a traffic series the anomaly rule judges: an agent's
// interface traffic, or the hub capture's (AgentID 0).
type SeriesRef struct {
	AgentID int64
	Site    string
}

// RateSource lists the series and reads their minutes (bits per second).
type RateSource interface {
	RateSeries(ctx context.Context) ([]SeriesRef, error)
	RateMinutes(ctx context.Context, agentID, from, to int64) (in, out []anomaly.Point, err error)
}

// Deviation is a series' current window judged against its band (GET
// /api/v1/anomaly/active).
type Deviation struct {
	AgentID  int64   `json:"agent_id"`
	Site     string  `json:"site"`
	Metric   string  `json:"metric" jsonschema:"enum=in,enum=out"`
	Value    float64 `json:"value_bps"`
	Z        float64 `json:"z"`
	Mean     float64 `json:"mean_bps"`
	SD       float64 `json:"sd_bps"`
	Samples  int     `json:"samples"`
	Hour     int     `json:"hour_utc"`
	Crit     bool    `json:"crit"`
	Message  string  `json:"message"`
	TS       int64   `json:"ts"`
	Severity int     `json:"severity"`
}

// baselineCache is a series' bands, rebuilt when the hour changes (the
// 7-day history moves by an hour; within it, a band moves little).
type baselineCache struct {
	hour    int64
	in, out anomaly.Baseline
}

// AnomalyConfig returns the anomaly section in force as the package's
// config.
func (e *Engine) AnomalyConfig() (anomaly.Config, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.settings.Anomaly
	return anomaly.Config{Sensitivity: a.Sensitivity, MinSamples: a.MinSamples, WindowMin: max(a.WindowMin, 1), CritZ: a.CritZ}, a.Enabled
}

// EvalAnomaly judges every series' last window against its hour-of-day
// band: a deviation raises (or repeats) anomaly <agent>|<metric>; an open
// anomaly whose series no longer deviates resolves (spec 3: anomaly
// resolves when the condition ends). The loop calls it every minute.
func (e *Engine) EvalAnomaly(ctx context.Context) {
	start := time.Now()
	defer func() { e.m.evalTime.WithLabelValues("anomaly").Observe(time.Since(start).Seconds()) }()
	cfg, on := e.AnomalyConfig()
	if !on || e.dep.Rates == nil {
		return
	}
	now := e.dep.Now()
	series, err := e.dep.Rates.RateSeries(ctx)
	if err != nil {
		e.m.errors.Inc()
		e.log.Warn("list traffic series", "error", err)
		return
	}
	winStart := now.Add(-time.Duration(cfg.WindowMin) * time.Minute).Unix()
	var alerts []rules.Alert
	var active []Deviation
	judged := map[string]bool{}
	for _, s := range series {
		b, err := e.baselineFor(ctx, s.AgentID, now, winStart)
		if err != nil {
			e.m.errors.Inc()
			e.log.Warn("build anomaly baseline", "agent", s.AgentID, "error", err)
			continue
		}
		in, out, err := e.dep.Rates.RateMinutes(ctx, s.AgentID, winStart, now.Unix()+1)
		if err != nil {
			e.m.errors.Inc()
			continue
		}
		for _, m := range []struct {
			name string
			b    *anomaly.Baseline
			pts  []anomaly.Point
		}{{"in", &b.in, in}, {"out", &b.out, out}} {
			key := fmt.Sprintf("%d|%s", s.AgentID, m.name)
			d, ok := anomaly.Judge(m.b, m.pts, now, m.name, cfg)
			judged[key] = ok
			if !ok || !d.Deviates {
				judged[key] = false
				continue
			}
			who := "hub capture"
			if s.AgentID != 0 {
				who = fmt.Sprintf("agent %d", s.AgentID)
			}
			sev := SeverityAnomaly
			if d.Crit {
				sev = SeverityAnomalyCrit
			}
			msg := who + ": " + d.Message()
			alerts = append(alerts, rules.Alert{Kind: KindAnomaly, Key: key, Message: msg, Severity: sev, Site: s.Site, AgentID: s.AgentID})
			active = append(active, Deviation{AgentID: s.AgentID, Site: s.Site, Metric: m.name, Value: d.Value, Z: d.Z, Mean: d.Band.Mean, SD: d.Band.SD,
				Samples: d.Band.N, Hour: d.Band.Hour, Crit: d.Crit, Message: msg, TS: now.Unix(), Severity: sev})
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.raiseLocked(ctx, now, alerts)
	e.active = active
	// Condition-based resolve: an open anomaly whose series was judged
	// and does not deviate now is resolved.
	for k, o := range e.open {
		kind, key, _ := cutKind(k)
		if kind != KindAnomaly {
			continue
		}
		if deviates, seen := judged[key]; seen && !deviates {
			if e.dep.Store != nil {
				if err := e.dep.Store.ResolveAlertEvent(ctx, o.id, now.Unix()); err != nil {
					e.m.errors.Inc()
					continue
				}
			}
			delete(e.open, k)
		}
	}
}

func cutKind(k string) (kind, key string, ok bool) {
	for i := 0; i < len(k); i++ {
		if k[i] == '|' {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
}

func (e *Engine) baselineFor(ctx context.Context, agent int64, now time.Time, winStart int64) (*baselineCache, error) {
	hour := now.Unix() / 3600
	e.mu.Lock()
	b := e.baselines[agent]
	e.mu.Unlock()
	if b != nil && b.hour == hour {
		return b, nil
	}
	from := now.Add(-anomaly.BaselineDays * 24 * time.Hour).Unix()
	in, out, err := e.dep.Rates.RateMinutes(ctx, agent, from, winStart)
	if err != nil {
		return nil, err
	}
	b = &baselineCache{hour: hour, in: anomaly.Build(in), out: anomaly.Build(out)}
	e.mu.Lock()
	if e.baselines == nil {
		e.baselines = map[int64]*baselineCache{}
	}
	e.baselines[agent] = b
	e.mu.Unlock()
	return b, nil
}

// ActiveAnomalies returns the deviations of the last evaluation.
func (e *Engine) ActiveAnomalies() []Deviation {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Deviation(nil), e.active...)
}
