package fleet

import (
	"context"
	"encoding/json"
	"time"

	"netmon/alerting/anomaly"
	"netmon/alerting/rules"
)

// agentRateMaxAge leaves out agents whose last batch is older: its rates
// describe a past interval, not the link now (an agent reports every
// 30 s by default).
const agentRateMaxAge = 2 * time.Minute

// agentRate is the part of an agent's stored rates the iface_util rule
// reads.
type agentRate struct {
	Name      string  `json:"name"`
	RxBps     float64 `json:"rx_bps"`
	TxBps     float64 `json:"tx_bps"`
	SpeedMbps int64   `json:"speed_mbps"`
}

// IfaceRates returns the agents' interfaces for the iface_util rule
// (alerting.IfaceSource): the rates of each agent's last batch over the
// link speed it reported; interfaces without a speed are left out.
func (s *Service) IfaceRates(ctx context.Context) ([]rules.IfaceRate, error) {
	if s.alertDB == nil {
		return nil, nil
	}
	agents, err := s.alertDB.ListAgents(ctx, "")
	if err != nil {
		return nil, err
	}
	cutoff := time.Now().Add(-agentRateMaxAge).Unix()
	var out []rules.IfaceRate
	var rs []agentRate
	for _, ag := range agents {
		if ag.LastSeen < cutoff || ag.Rates == "" {
			continue
		}
		rs = rs[:0]
		if json.Unmarshal([]byte(ag.Rates), &rs) != nil {
			continue
		}
		for _, r := range rs {
			if r.SpeedMbps <= 0 {
				continue
			}
			// Rates are stored in bits per second already.
			out = append(out, rules.IfaceRate{AgentID: ag.ID, Site: ag.Site, Name: r.Name,
				SpeedBps: float64(r.SpeedMbps) * 1e6, InBps: r.RxBps, OutBps: r.TxBps})
		}
	}
	return out, nil
}

// RateSeries lists the traffic series the anomaly rule judges
// (alerting.RateSource): the hub capture's (agent 0, kept in the same
// minute table as the agents') and those of the agents that reported in
// the last inventoryMaxAge.
func (s *Service) RateSeries(ctx context.Context) ([]anomaly.SeriesRef, error) {
	out := []anomaly.SeriesRef{{AgentID: 0}}
	if s.alertDB == nil {
		return out, nil
	}
	agents, err := s.alertDB.ListAgents(ctx, "")
	if err != nil {
		return out, err
	}
	cutoff := time.Now().Add(-inventoryMaxAge).Unix()
	for _, ag := range agents {
		if ag.LastSeen >= cutoff {
			out = append(out, anomaly.SeriesRef{AgentID: ag.ID, Site: ag.Site})
		}
	}
	return out, nil
}

// RateMinutes reads a series' minutes (bits per second).
func (s *Service) RateMinutes(ctx context.Context, agentID, from, to int64) (in, out []anomaly.Point, err error) {
	ms, err := s.alertDB.RateMinutes(ctx, agentID, from, to)
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
func (s *Service) RateHours(ctx context.Context, agentID, from, to int64) (in, out []anomaly.HourAgg, err error) {
	hs, err := s.alertDB.RateHours(ctx, agentID, from, to)
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

// DeepTop lists an agent's busiest processes and domains
// (alerting.DeepSource).
func (s *Service) DeepTop(ctx context.Context, agentID, from, to int64, n int) (procs, domains []string, err error) {
	return s.alertDB.DeepTop(ctx, agentID, from, to, n)
}

// DeepMinutes reads the per-process and per-domain series
// (alerting.DeepSource).
func (s *Service) DeepMinutes(ctx context.Context, agentID, from, to int64, procs, domains []string) (map[string][]anomaly.Point, error) {
	ms, err := s.alertDB.DeepMinutes(ctx, agentID, from, to, procs, domains)
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
