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
