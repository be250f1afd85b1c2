package alerting

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// SeriesRef is a traffic series the anomaly rule judges (declared in
// alerting/anomaly so its owners, the fleet, can name it).
type SeriesRef = anomaly.SeriesRef

// RateSource lists the series and reads their minutes (bits per second).
type RateSource interface {
	RateSeries(ctx context.Context) ([]SeriesRef, error)
	RateMinutes(ctx context.Context, agentID, from, to int64) (in, out []anomaly.Point, err error)
}

// RateHourSource is an optional side of a RateSource: the hourly
// aggregates of an interface series, from which the hour-of-week bands
// are built once 4 weeks of history exist.
type RateHourSource interface {
	RateHours(ctx context.Context, agentID, from, to int64) (in, out []anomaly.HourAgg, err error)
}

// DeepSource is an optional side of a RateSource: per-process traffic
// (bit/s) and per-domain DNS queries (queries/min) of an agent's deep
// collection, keyed "proc:<name>" and "dns:<domain>".
type DeepSource interface {
	DeepTop(ctx context.Context, agentID, from, to int64, n int) (procs, domains []string, err error)
	DeepMinutes(ctx context.Context, agentID, from, to int64, procs, domains []string) (map[string][]anomaly.Point, error)
}

// DeepTopN bounds the deep series per agent: its 10 busiest processes
// (bytes over the 7 days) and 10 most queried domains. 1 000 agents are
// then 20 000 deep series at most, a cycle stays a few milliseconds
// (BenchmarkEvalAnomaly), and the long tail left out rarely reaches
// min_samples minutes in a band anyway.
const DeepTopN = 10

// Deviation is a series' current window judged against its band (GET
// /api/v1/anomaly/active).
type Deviation struct {
	AgentID int64  `json:"agent_id"`
	Site    string `json:"site"`
	// Metric is in, out, proc:<process> or dns:<domain>.
	Metric string `json:"metric"`
	// Unit is bit/s (in, out, proc:) or queries/min (dns:); value_bps,
	// mean_bps and sd_bps are in it.
	Unit    string  `json:"unit" jsonschema:"enum=bit/s,enum=queries/min"`
	Value   float64 `json:"value_bps"`
	Z       float64 `json:"z"`
	Mean    float64 `json:"mean_bps"`
	SD      float64 `json:"sd_bps"`
	Samples int     `json:"samples"`
	Hour    int     `json:"hour_utc"`
	// Weekly is true when the band was the hour-of-week band (weekday
	// set, 0 Sunday) of 4 weeks' history, false for the hour-of-day band.
	Weekly   bool   `json:"weekly"`
	Weekday  int    `json:"weekday"`
	Crit     bool   `json:"crit"`
	Message  string `json:"message"`
	TS       int64  `json:"ts"`
	Severity int    `json:"severity"`
}

// baselineCache is a series' bands, rebuilt when the hour changes (the
// 7-day history moves by an hour; within it, a band moves little).
type baselineCache struct {
	hour    int64
	in, out anomaly.Baseline
	// inW and outW are nil without a RateHourSource.
	inW, outW *anomaly.WeekBaseline
	// procs and domains are the agent's top DeepTopN names, deep their
	// hour-of-day bands by key.
	procs, domains []string
	deep           map[string]*anomaly.Baseline
}

// seriesJudge is one series of a cycle to judge.
type seriesJudge struct {
	metric string
	unit   string
	b      *anomaly.Baseline
	w      *anomaly.WeekBaseline
	pts    []anomaly.Point
}

// AnomalyConfig returns the anomaly section in force as the package's
// config.
func (e *Engine) AnomalyConfig() (anomaly.Config, bool) {
	a := e.Settings().Anomaly
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
	var todo []seriesJudge
	judged := make(map[string]bool, len(series)*2)
	// complete holds the agents whose every series was read this cycle:
	// an open deep anomaly of such an agent whose process or domain left
	// the top list (so was not judged) resolves too.
	complete := make(map[int64]bool, len(series))
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
		todo = append(todo[:0], seriesJudge{"in", "", &b.in, b.inW, in}, seriesJudge{"out", "", &b.out, b.outW, out})
		if ds, ok := e.dep.Rates.(DeepSource); ok && len(b.procs)+len(b.domains) > 0 {
			win, err := ds.DeepMinutes(ctx, s.AgentID, winStart, now.Unix()+1, b.procs, b.domains)
			if err != nil {
				e.m.errors.Inc()
			} else {
				todo = b.appendDeep(todo, win)
				complete[s.AgentID] = true
			}
		} else {
			complete[s.AgentID] = true
		}
		for _, m := range todo {
			key := strconv.FormatInt(s.AgentID, 10) + "|" + m.metric
			d, ok := anomaly.JudgeSeasonal(m.b, m.w, m.pts, now, m.metric, cfg)
			if !ok || !d.Deviates {
				judged[key] = false
				continue
			}
			judged[key] = true
			d.Unit = m.unit
			who := "hub capture"
			if s.AgentID != 0 {
				who = fmt.Sprintf("agent %d", s.AgentID)
			}
			sev := SeverityAnomaly
			if d.Crit {
				sev = SeverityAnomalyCrit
			}
			unit := "bit/s"
			if m.unit != "" {
				unit = m.unit
			}
			msg := who + ": " + d.Message()
			alerts = append(alerts, rules.Alert{Kind: KindAnomaly, Key: key, Message: msg, Severity: sev, Site: s.Site, AgentID: s.AgentID})
			active = append(active, Deviation{AgentID: s.AgentID, Site: s.Site, Metric: m.metric, Unit: unit, Value: d.Value, Z: d.Z, Mean: d.Band.Mean, SD: d.Band.SD,
				Samples: d.Band.N, Hour: d.Band.Hour, Weekly: d.Weekly, Weekday: int(d.Weekday), Crit: d.Crit, Message: msg, TS: now.Unix(), Severity: sev})
		}
	}
	e.lock()
	defer e.unlock()
	e.raiseLocked(ctx, now, alerts)
	e.tickMu.Lock()
	e.active = active
	e.tickMu.Unlock()
	// Condition-based resolve: an open anomaly whose series was judged
	// and does not deviate now is resolved, and so is one of a series no
	// longer judged (a process or domain out of the top list) of an
	// agent read whole.
	for k, o := range e.open {
		kind, key, _ := cutKind(k)
		if kind != KindAnomaly {
			continue
		}
		deviates, seen := judged[key]
		if !seen {
			agent, _, _ := strings.Cut(key, "|")
			id, err := strconv.ParseInt(agent, 10, 64)
			seen = err == nil && complete[id]
		}
		if seen && !deviates {
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
	if hs, ok := e.dep.Rates.(RateHourSource); ok {
		// The 4 weeks before the window, as hourly aggregates; a band
		// with fewer than 4 distinct weeks falls back to hour of day.
		wIn, wOut, err := hs.RateHours(ctx, agent, now.Add(-anomaly.WeeklyDays*24*time.Hour).Unix(), winStart)
		if err != nil {
			return nil, err
		}
		b.inW, b.outW = anomaly.BuildWeekly(wIn), anomaly.BuildWeekly(wOut)
	}
	if ds, ok := e.dep.Rates.(DeepSource); ok && agent != 0 {
		if b.procs, b.domains, err = ds.DeepTop(ctx, agent, from, winStart, DeepTopN); err != nil {
			return nil, err
		}
		hist, err := ds.DeepMinutes(ctx, agent, from, winStart, b.procs, b.domains)
		if err != nil {
			return nil, err
		}
		b.deep = make(map[string]*anomaly.Baseline, len(hist))
		for k, pts := range hist {
			bl := anomaly.Build(pts)
			b.deep[k] = &bl
		}
	}
	e.mu.Lock()
	if e.baselines == nil {
		e.baselines = map[int64]*baselineCache{}
	}
	e.baselines[agent] = b
	e.mu.Unlock()
	return b, nil
}

// appendDeep adds the deep series with a baseline, in the order of the
// top lists (processes, then domains).
func (b *baselineCache) appendDeep(todo []seriesJudge, win map[string][]anomaly.Point) []seriesJudge {
	for _, l := range []struct {
		prefix, unit string
		names        []string
	}{{"proc:", "", b.procs}, {"dns:", anomaly.UnitQueries, b.domains}} {
		for _, n := range l.names {
			key := l.prefix + n
			if bl := b.deep[key]; bl != nil {
				todo = append(todo, seriesJudge{metric: key, unit: l.unit, b: bl, pts: win[key]})
			}
		}
	}
	return todo
}

// ActiveAnomalies returns the deviations of the last evaluation.
func (e *Engine) ActiveAnomalies() []Deviation {
	e.tickMu.Lock()
	defer e.tickMu.Unlock()
	return append([]Deviation(nil), e.active...)
}
