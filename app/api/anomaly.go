package api

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/alerting"
	"netmon/alerting/anomaly"
	"netmon/app/api/router"
	"netmon/app/errs"
	"netmon/store"
)

// AnomalyEngine is the alert engine's anomaly side (*alerting.Engine).
type AnomalyEngine interface {
	AnomalyConfig() (anomaly.Config, bool)
	ActiveAnomalies() []alerting.Deviation
}

// RateStore reads traffic minutes (*store.DB).
type RateStore interface {
	RateMinutes(ctx context.Context, agentID, from, to int64) ([]store.RateMinute, error)
	RateHours(ctx context.Context, agentID, from, to int64) ([]store.RateHour, error)
	DeepMinutes(ctx context.Context, agentID, from, to int64, procs, domains []string) (map[string][]store.SeriesMinute, error)
}

type baselineIn struct {
	AgentID int64  `query:"agent_id" min:"0" doc:"the agent (0: the hub capture)"`
	Metric  string `query:"metric" default:"in" doc:"in, out (interface or hub capture traffic, bit/s), proc:<process> (an agent's process traffic, bit/s) or dns:<domain> (an agent's DNS queries per minute)"`
	Hours   int    `query:"hours" min:"1" max:"168" default:"24" doc:"hours of actual series, ending now"`
}

// AnomalyBaseline is the body of GET /api/v1/anomaly/baseline: the
// expected band (mean ± sensitivity·sd of each minute's hour of day, over
// the 7 days before the window) and the actual series.
type AnomalyBaseline struct {
	AgentID     int64           `json:"agent_id"`
	Metric      string          `json:"metric"`
	Unit        string          `json:"unit" jsonschema:"enum=bit/s,enum=queries/min"`
	Sensitivity float64         `json:"sensitivity"`
	MinSamples  int             `json:"min_samples"`
	Bands       []BandView      `json:"bands" jsonschema_description:"the 24 hour-of-day bands (UTC)"`
	Points      []BaselinePoint `json:"points" jsonschema_description:"each minute of the window with its band"`
	// WeeklyBands are the hour-of-week bands with 4 weeks of history (in
	// and out only); a minute of such an hour is judged against it.
	WeeklyBands []WeekBandView `json:"weekly_bands" jsonschema_description:"hour-of-week bands (UTC) with at least 4 weeks of history; empty when none"`
}

// WeekBandView is one hour of week's baseline.
type WeekBandView struct {
	BandView
	Weekday int `json:"weekday" jsonschema_description:"0 Sunday .. 6 Saturday"`
	Weeks   int `json:"weeks"`
}

// BandView is one hour of day's baseline.
type BandView struct {
	Hour    int     `json:"hour_utc"`
	Mean    float64 `json:"mean"`
	SD      float64 `json:"sd"`
	Samples int     `json:"samples"`
	// Lower and Upper are mean ∓ sensitivity·sd (lower not below 0).
	Lower float64 `json:"lower"`
	Upper float64 `json:"upper"`
	// Judged is false when the band has fewer than min_samples minutes
	// (or no spread): the rule does not judge that hour.
	Judged bool `json:"judged"`
}

// BaselinePoint is a minute of the actual series under its band.
type BaselinePoint struct {
	TS     int64   `json:"ts"`
	Actual float64 `json:"actual"`
	Mean   float64 `json:"mean"`
	Lower  float64 `json:"lower"`
	Upper  float64 `json:"upper"`
	// Weekly is true when the minute's band is its hour-of-week band.
	Weekly bool `json:"weekly"`
}

func (s *Server) visibleSeries(c *gin.Context, agentID int64) error {
	who := callerOf(c)
	if agentID == 0 {
		return who.Visible("")
	}
	if s.deps.Fleet == nil {
		return errNoSeries
	}
	_, err := s.deps.Fleet.AgentDetail(c, who.SiteFilter(), agentID)
	return err
}

var errNoSeries = errs.NotFoundf("no such agent")

// errBadMetric is a metric that names no series.
var errBadMetric = errs.InvalidField("metric", "metric must be in, out, proc:<process> or dns:<domain> (the last two for an agent)")

func (s *Server) anomalyBaseline(c *gin.Context, in *baselineIn) (AnomalyBaseline, error) {
	deep := strings.HasPrefix(in.Metric, "proc:") || strings.HasPrefix(in.Metric, "dns:")
	_, name, _ := strings.Cut(in.Metric, ":")
	if !deep && in.Metric != "in" && in.Metric != "out" || deep && (name == "" || in.AgentID == 0 || len(in.Metric) > 300) {
		return AnomalyBaseline{}, errBadMetric
	}
	if err := s.visibleSeries(c, in.AgentID); err != nil {
		return AnomalyBaseline{}, err
	}
	cfg := anomaly.Config{Sensitivity: 3, MinSamples: 120, WindowMin: 5}
	if s.deps.Anomalies != nil {
		cfg, _ = s.deps.Anomalies.AnomalyConfig()
	}
	unit := "bit/s"
	if strings.HasPrefix(in.Metric, "dns:") {
		unit = "queries/min"
	}
	out := AnomalyBaseline{AgentID: in.AgentID, Metric: in.Metric, Unit: unit, Sensitivity: cfg.Sensitivity, MinSamples: cfg.MinSamples,
		Bands: []BandView{}, Points: []BaselinePoint{}, WeeklyBands: []WeekBandView{}}
	if s.deps.Rates == nil {
		return out, nil
	}
	now := time.Now()
	from := now.Add(-time.Duration(in.Hours) * time.Hour).Unix()
	winStart := now.Add(-time.Duration(max(cfg.WindowMin, 1)) * time.Minute).Unix()
	hist, err := s.series(c, in, deep, name, now.Add(-anomaly.BaselineDays*24*time.Hour).Unix(), now.Unix()+1)
	if err != nil {
		return out, err
	}
	var base []anomaly.Point
	for _, p := range hist {
		if p.TS < winStart {
			base = append(base, p)
		}
	}
	b := anomaly.Build(base)
	for _, band := range b {
		out.Bands = append(out.Bands, s.bandView(band, cfg))
	}
	weekly := map[int]WeekBandView{}
	if !deep {
		aggs, err := s.deps.Rates.RateHours(c, in.AgentID, now.Add(-anomaly.WeeklyDays*24*time.Hour).Unix(), winStart)
		if err != nil {
			return out, err
		}
		for i, wb := range anomaly.BuildWeekly(hourAggs(aggs, in.Metric)) {
			if wb.Weeks >= anomaly.WeeklyMinWeeks {
				v := WeekBandView{BandView: s.bandView(wb.Band, cfg), Weekday: int(wb.Weekday), Weeks: wb.Weeks}
				weekly[i] = v
				out.WeeklyBands = append(out.WeeklyBands, v)
			}
		}
	}
	for _, p := range hist {
		if p.TS < from {
			continue
		}
		t := time.Unix(p.TS, 0).UTC()
		band, isWeekly := out.Bands[t.Hour()], false
		if wb, ok := weekly[int(t.Weekday())*24+t.Hour()]; ok && wb.Judged {
			band, isWeekly = wb.BandView, true
		}
		out.Points = append(out.Points, BaselinePoint{TS: p.TS, Actual: p.V, Mean: band.Mean, Lower: band.Lower, Upper: band.Upper, Weekly: isWeekly})
	}
	return out, nil
}

// series reads the minutes of the metric asked for.
func (s *Server) series(ctx context.Context, in *baselineIn, deep bool, name string, from, to int64) ([]anomaly.Point, error) {
	var out []anomaly.Point
	if deep {
		var procs, domains []string
		if strings.HasPrefix(in.Metric, "proc:") {
			procs = []string{name}
		} else {
			domains = []string{name}
		}
		ms, err := s.deps.Rates.DeepMinutes(ctx, in.AgentID, from, to, procs, domains)
		for _, m := range ms[in.Metric] {
			out = append(out, anomaly.Point{TS: m.TS, V: m.V})
		}
		return out, err
	}
	ms, err := s.deps.Rates.RateMinutes(ctx, in.AgentID, from, to)
	for _, m := range ms {
		out = append(out, anomaly.Point{TS: m.TS, V: pick(m, in.Metric)})
	}
	return out, err
}

func (s *Server) bandView(band anomaly.Band, cfg anomaly.Config) BandView {
	v := BandView{Hour: band.Hour, Mean: band.Mean, SD: band.SD, Samples: band.N, Judged: band.N >= max(cfg.MinSamples, 2) && band.SD > 0}
	v.Lower, v.Upper = math.Max(band.Mean-cfg.Sensitivity*band.SD, 0), band.Mean+cfg.Sensitivity*band.SD
	return v
}

func hourAggs(hs []store.RateHour, metric string) []anomaly.HourAgg {
	out := make([]anomaly.HourAgg, len(hs))
	for i, h := range hs {
		out[i] = anomaly.HourAgg{TS: h.TS, N: h.N, Sum: h.InSum, SumSq: h.InSq}
		if metric == "out" {
			out[i].Sum, out[i].SumSq = h.OutSum, h.OutSq
		}
	}
	return out
}

func pick(m store.RateMinute, metric string) float64 {
	if metric == "out" {
		return m.OutBps
	}
	return m.InBps
}

func (s *Server) anomalyActive(c *gin.Context, _ *router.NoInput) ([]alerting.Deviation, error) {
	out := []alerting.Deviation{}
	if s.deps.Anomalies == nil {
		return out, nil
	}
	who := callerOf(c)
	for _, d := range s.deps.Anomalies.ActiveAnomalies() {
		if who.Visible(d.Site) == nil {
			out = append(out, d)
		}
	}
	return out, nil
}
