package hub

import (
	"context"
	"time"

	"netmon/alerting"
	"netmon/alerting/anomaly"
)

// alertRates is the anomaly rule's input: the hub capture's minute
// history and the interface traffic of the agents that reported in the
// last inventoryMaxAge.
type alertRates struct{ h *Hub }

func (a alertRates) RateSeries(ctx context.Context) ([]alerting.SeriesRef, error) {
	out := []alerting.SeriesRef{{AgentID: 0}}
	agents, err := a.h.db.ListAgents(ctx, "")
	if err != nil {
		return out, err
	}
	cutoff := time.Now().Add(-inventoryMaxAge).Unix()
	for _, ag := range agents {
		if ag.LastSeen >= cutoff {
			out = append(out, alerting.SeriesRef{AgentID: ag.ID, Site: ag.Site})
		}
	}
	return out, nil
}

func (a alertRates) RateMinutes(ctx context.Context, agentID, from, to int64) (in, out []anomaly.Point, err error) {
	ms, err := a.h.db.RateMinutes(ctx, agentID, from, to)
	if err != nil {
		return nil, nil, err
	}
	in, out = make([]anomaly.Point, len(ms)), make([]anomaly.Point, len(ms))
	for i, m := range ms {
		in[i], out[i] = anomaly.Point{TS: m.TS, V: m.InBps}, anomaly.Point{TS: m.TS, V: m.OutBps}
	}
	return in, out, nil
}

// RateHours feeds the hour-of-week bands (alerting.RateHourSource).
func (a alertRates) RateHours(ctx context.Context, agentID, from, to int64) (in, out []anomaly.HourAgg, err error) {
	hs, err := a.h.db.RateHours(ctx, agentID, from, to)
	if err != nil {
		return nil, nil, err
	}
	in, out = make([]anomaly.HourAgg, len(hs)), make([]anomaly.HourAgg, len(hs))
	for i, h := range hs {
		in[i] = anomaly.HourAgg{TS: h.TS, N: h.N, Sum: h.InSum, SumSq: h.InSq}
		out[i] = anomaly.HourAgg{TS: h.TS, N: h.N, Sum: h.OutSum, SumSq: h.OutSq}
	}
	return in, out, nil
}

// DeepTop and DeepMinutes feed the per-process and per-domain series
// (alerting.DeepSource).
func (a alertRates) DeepTop(ctx context.Context, agentID, from, to int64, n int) (procs, domains []string, err error) {
	return a.h.db.DeepTop(ctx, agentID, from, to, n)
}

func (a alertRates) DeepMinutes(ctx context.Context, agentID, from, to int64, procs, domains []string) (map[string][]anomaly.Point, error) {
	ms, err := a.h.db.DeepMinutes(ctx, agentID, from, to, procs, domains)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]anomaly.Point, len(ms))
	for k, l := range ms {
		pts := make([]anomaly.Point, len(l))
		for i, m := range l {
			pts[i] = anomaly.Point{TS: m.TS, V: m.V}
		}
		out[k] = pts
	}
	return out, nil
}

var (
	_ alerting.RateHourSource = alertRates{}
	_ alerting.DeepSource     = alertRates{}
)
