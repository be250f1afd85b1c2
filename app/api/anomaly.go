package api

import (
	"context"
	"math"
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
}

type baselineIn struct {
	AgentID int64  `query:"agent_id" min:"0" doc:"the agent (0: the hub capture)"`
	Metric  string `query:"metric" enum:"in,out" default:"in" doc:"traffic direction"`
	Hours   int    `query:"hours" min:"1" max:"168" default:"24" doc:"hours of actual series, ending now"`
}

// AnomalyBaseline is the body of GET /api/v1/anomaly/baseline: the
// expected band (mean ± sensitivity·sd of each minute's hour of day, over
// the 7 days before the window) and the actual series.
type AnomalyBaseline struct {
	AgentID     int64           `json:"agent_id"`
	Metric      string          `json:"metric"`
	Unit        string          `json:"unit" jsonschema:"enum=bit/s"`
	Sensitivity float64         `json:"sensitivity"`
	MinSamples  int             `json:"min_samples"`
	Bands       []BandView      `json:"bands" jsonschema_description:"the 24 hour-of-day bands (UTC)"`
	Points      []BaselinePoint `json:"points" jsonschema_description:"each minute of the window with its band"`
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

func (s *Server) anomalyBaseline(c *gin.Context, in *baselineIn) (AnomalyBaseline, error) {
	if err := s.visibleSeries(c, in.AgentID); err != nil {
		return AnomalyBaseline{}, err
	}
	cfg := anomaly.Config{Sensitivity: 3, MinSamples: 120, WindowMin: 5}
	if s.deps.Anomalies != nil {
		cfg, _ = s.deps.Anomalies.AnomalyConfig()
	}
	out := AnomalyBaseline{AgentID: in.AgentID, Metric: in.Metric, Unit: "bit/s", Sensitivity: cfg.Sensitivity, MinSamples: cfg.MinSamples, Bands: []BandView{}, Points: []BaselinePoint{}}
	if s.deps.Rates == nil {
		return out, nil
	}
	now := time.Now()
	from := now.Add(-time.Duration(in.Hours) * time.Hour).Unix()
	winStart := now.Add(-time.Duration(max(cfg.WindowMin, 1)) * time.Minute).Unix()
	hist, err := s.deps.Rates.RateMinutes(c, in.AgentID, now.Add(-anomaly.BaselineDays*24*time.Hour).Unix(), now.Unix()+1)
	if err != nil {
		return out, err
	}
	var base []anomaly.Point
	for _, m := range hist {
		if m.TS < winStart {
			base = append(base, anomaly.Point{TS: m.TS, V: pick(m, in.Metric)})
		}
	}
	b := anomaly.Build(base)
	for _, band := range b {
		v := BandView{Hour: band.Hour, Mean: band.Mean, SD: band.SD, Samples: band.N, Judged: band.N >= max(cfg.MinSamples, 2) && band.SD > 0}
		v.Lower, v.Upper = math.Max(band.Mean-cfg.Sensitivity*band.SD, 0), band.Mean+cfg.Sensitivity*band.SD
		out.Bands = append(out.Bands, v)
	}
	for _, m := range hist {
		if m.TS < from {
			continue
		}
		band := out.Bands[time.Unix(m.TS, 0).UTC().Hour()]
		out.Points = append(out.Points, BaselinePoint{TS: m.TS, Actual: pick(m, in.Metric), Mean: band.Mean, Lower: band.Lower, Upper: band.Upper})
	}
	return out, nil
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
