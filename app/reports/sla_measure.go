package reports

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"netmon/store"
)

// The measurements of SLA targets. Every value is a percentage rounded to
// 0.01, and the threshold is compared with the rounded value, so the
// console, the report and the alert message never disagree about a
// target that sits on its threshold.
//
//   - agent_uptime: for one agent, the % of the window's whole minutes, from
//     the minute of its enrollment on (an agent enrolled inside the window
//     is not expected before it), in which the hub stored at least one
//     telemetry batch of it (agent_samples). The window's start is
//     clamped to the telemetry retention (SLAConfig.RetentionHours). Site
//     scope: the mean of its agents' percentages (each agent weighs the
//     same, whatever its enrollment time); agents enrolled after the
//     window are left out. Met when measured >= threshold.
//   - device_availability: for one device, answered polls / all polls ×
//     100 over the window (device_polls, counted by every SNMP or firewall
//     REST poll). Site scope: the mean over the devices polled in the
//     window. Met when measured >= threshold.
//   - iface_util_p95: for each interface of the devices in scope, the
//     nearest-rank 95th percentile of its polls' utilisation (the busier
//     direction's %, polls without a known speed left out); the value is
//     the busiest interface's. Met when measured <= threshold.
//   - packet_drop: the hub capture's dropped / (read + dropped) × 100 over
//     the window (traffic_minutes). Only the hub's capture counts drops,
//     and it belongs to no site, so the target's scope is every site. Met
//     when measured <= threshold.
//
// No agent, device, interface sample or captured packet in the window is
// NoData, which is never a breach.

// slaMeasure is a target's status and a note for the alert message.
type slaMeasure struct {
	TargetStatus
	// busiest names the busiest interface of iface_util_p95.
	busiest string
}

// window returns the measured [start, end) in Unix seconds: from and to
// taken down to the minute; with clamp, start no earlier than the first
// whole minute the telemetry retention keeps.
func (s *SLA) window(from, to time.Time, clamp bool) (int64, int64) {
	start, end := from.Unix(), to.Unix()
	start, end = start-mod60(start), end-mod60(end)
	if clamp && s.cfg.RetentionHours > 0 {
		cut := s.deps.Now().Add(-time.Duration(s.cfg.RetentionHours) * time.Hour).Unix()
		if r := mod60(cut); r != 0 {
			cut += 60 - r
		}
		start = max(start, cut)
	}
	return start, end
}

func mod60(v int64) int64 { return ((v % 60) + 60) % 60 }

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// meanUptime is the mean over agents of their % of minutes reported.
func meanUptime(ms []store.AgentMinutes) (float64, int) {
	if len(ms) == 0 {
		return 0, 0
	}
	var sum float64
	for _, m := range ms {
		sum += 100 * float64(m.Reported) / float64(m.Expected)
	}
	return round2(sum / float64(len(ms))), len(ms)
}

// meanAvailability is the mean over devices of their % of polls answered.
func meanAvailability(cs []store.DevicePollCount) (float64, int) {
	if len(cs) == 0 {
		return 0, 0
	}
	var sum float64
	for _, c := range cs {
		sum += 100 * float64(c.OK) / float64(c.OK+c.Failed)
	}
	return round2(sum / float64(len(cs))), len(cs)
}

// measure measures t over its window ending at end.
func (s *SLA) measure(ctx context.Context, t SLATarget, end time.Time) (slaMeasure, error) {
	m := slaMeasure{TargetStatus: TargetStatus{Target: t, Evaluated: end.Unix()}}
	from := end.Add(-time.Duration(t.WindowHours) * time.Hour)
	scope := store.SLAScope{Site: t.Site, AgentID: t.AgentID, DeviceID: t.DeviceID}
	var n int
	switch t.Metric {
	case MetricAgentUptime:
		start, stop := s.window(from, end, true)
		if start >= stop {
			break
		}
		ms, err := s.deps.Store.AgentUptime(ctx, scope, start, stop)
		if err != nil {
			return m, err
		}
		m.Measured, n = meanUptime(ms)
	case MetricDeviceAvailability:
		start, stop := s.window(from, end, false)
		cs, err := s.deps.Store.DevicePolls(ctx, scope, start, stop)
		if err != nil {
			return m, err
		}
		m.Measured, n = meanAvailability(cs)
	case MetricIfaceUtilP95:
		start, stop := s.window(from, end, false)
		ps, err := s.deps.Store.IfaceUtilP95(ctx, scope, start, stop)
		if err != nil {
			return m, err
		}
		if n = len(ps); n > 0 {
			m.Measured = round2(ps[0].P95)
			m.busiest = "busiest: device " + strconv.FormatInt(ps[0].DeviceID, 10) + " ifIndex " + strconv.FormatInt(ps[0].IfIndex, 10)
		}
	case MetricPacketDrop:
		start, stop := s.window(from, end, false)
		packets, dropped, err := s.deps.Store.CaptureDrops(ctx, start, stop)
		if err != nil {
			return m, err
		}
		if packets+dropped > 0 {
			m.Measured, n = round2(100*float64(dropped)/float64(packets+dropped)), 1
		}
	default:
		return m, fmt.Errorf("sla target %d: unknown metric %q", t.ID, t.Metric)
	}
	if n == 0 {
		m.Measured, m.NoData, m.Met = 0, true, true
		return m, nil
	}
	if atLeast(t.Metric) {
		m.Met = m.Measured >= t.Threshold
	} else {
		m.Met = m.Measured <= t.Threshold
	}
	return m, nil
}

// atLeast tells a metric whose target is a floor (uptime, availability)
// from one whose target is a ceiling (utilisation, drops).
func atLeast(metric string) bool {
	return metric == MetricAgentUptime || metric == MetricDeviceAvailability
}

var metricLabels = map[string]string{
	MetricAgentUptime:        "agent uptime",
	MetricDeviceAvailability: "device availability",
	MetricIfaceUtilP95:       "interface utilisation p95",
	MetricPacketDrop:         "packet drop",
}

// breachMessage is the sla_breach message: the target's name, the
// measured value, the threshold it crossed, the window and the scope, e.g.
// SLA "office uptime": agent uptime 97.20 % < 99.00 % over 24 h (site ist).
func breachMessage(t SLATarget, m slaMeasure) string {
	op := ">"
	if atLeast(t.Metric) {
		op = "<"
	}
	scope := "all sites"
	if t.Site != "" {
		scope = "site " + t.Site
	}
	switch t.Scope {
	case ScopeAgent:
		scope = "agent " + strconv.FormatInt(t.AgentID, 10) + ", " + scope
	case ScopeDevice:
		scope = "device " + strconv.FormatInt(t.DeviceID, 10) + ", " + scope
	}
	if m.busiest != "" {
		scope += "; " + m.busiest
	}
	return fmt.Sprintf("SLA %q: %s %.2f %% %s %.2f %% over %d h (%s)", t.Name, metricLabels[t.Metric], m.Measured, op, t.Threshold, t.WindowHours, scope)
}
