package reports

import (
	"fmt"
	"strings"

	"netmon/app/reports/model"
)

// Threshold-based recommendations of the enterprise report: each one is
// triggered by a figure of the report crossing a threshold below, and
// cites that figure and the threshold.
const (
	// minAgentUptimePct: agents should report 99 % of the minutes (about
	// 7 hours of silence a month); below, the agents reporting least are
	// named.
	minAgentUptimePct = 99.0
	// minDeviceAvailabilityPct: devices should answer 99 % of their polls.
	minDeviceAvailabilityPct = 99.0
	// maxPacketDropPct: the capture should drop under 0.1 % of packets;
	// above, its figures under-count and the host needs a bigger buffer
	// or fewer filters.
	maxPacketDropPct = 0.1
	// maxGrowthPct: traffic up more than 20 % on the previous period of
	// equal length is a trend to plan capacity for.
	maxGrowthPct = 20.0
	// maxP95Bps is not a fixed figure: the links' capacity is not known
	// to the report, so utilisation comes from the SLA targets on
	// iface_util_p95 (a breached target is cited below).
	// minHealthScore: below 80 the health score's deductions need action.
	minHealthScore = 80
	// maxUnackedCritical: every critical alert (severity 8+) should be
	// acknowledged; any left firing is cited.
	maxUnackedCritical = 0
	// maxNamedAgents is how many agents a recommendation names.
	maxNamedAgents = 5
)

// recommendations lists what the figures call for, in the order of the
// checks below; empty when every figure is within its threshold.
func (b *Builder) recommendations(f *reportFacts) []string {
	var out []string
	if s := f.sla; s != nil {
		if s.Agents > 0 && s.AgentUptimePct < minAgentUptimePct {
			r := fmt.Sprintf("Agent uptime %s is below %s", fmtPct(s.AgentUptimePct), fmtPct(minAgentUptimePct))
			if names := f.lowAgents(); len(names) > 0 {
				r += ": check agents " + strings.Join(names, ", ")
			}
			out = append(out, r+".")
		}
		if s.Devices > 0 && s.DeviceAvailabilityPct < minDeviceAvailabilityPct {
			out = append(out, fmt.Sprintf("Device availability %s is below %s: check the devices' reachability and SNMP credentials.",
				fmtPct(s.DeviceAvailabilityPct), fmtPct(minDeviceAvailabilityPct)))
		}
		if s.HasPacketDrop && s.PacketDropPct > maxPacketDropPct {
			out = append(out, fmt.Sprintf("Packet drop %s is above %s: the capture under-counts; give it a larger buffer or a narrower filter.",
				fmtPct(s.PacketDropPct), fmtPct(maxPacketDropPct)))
		}
		for _, t := range s.Targets {
			if !t.Met && !t.NoData {
				out = append(out, fmt.Sprintf("SLA target %q (%s, %s) measured %s against %s: breached.",
					t.Target.Name, t.Target.Metric, targetScope(t.Target), fmtPct(t.Measured), fmtPct(t.Target.Threshold)))
			}
		}
	}
	if t := f.traffic; t != nil {
		if g, ok := t.growth(); ok && g > maxGrowthPct {
			out = append(out, fmt.Sprintf("Traffic grew %s on the previous period (%s to %s), above %s: plan capacity.",
				fmtChange(g), fmtBytes(t.prevTotal()), fmtBytes(t.total()), fmtChange(maxGrowthPct)))
		}
	}
	if a := f.alerts; a != nil {
		if a.unackedCrit > maxUnackedCritical {
			out = append(out, fmt.Sprintf("%s critical %s (severity 8+) of this period %s unacknowledged: review and acknowledge them.",
				fmtCount(a.unackedCrit), pluralOf(a.unackedCrit, "alert", "alerts"), pluralOf(a.unackedCrit, "is", "are")))
		}
		if n := a.critIncidents(); n > 0 {
			out = append(out, fmt.Sprintf("%s critical %s still open (severity 8+): assign an owner to each.",
				fmtCount(n), pluralOf(n, "incident is", "incidents are")))
		}
	}
	if h := f.health; h != nil && h.Score < minHealthScore {
		out = append(out, fmt.Sprintf("Network health score %d is below %d: see its deductions.", h.Score, minHealthScore))
	}
	return out
}

// lowAgents names the agents under the uptime threshold, least first.
func (f *reportFacts) lowAgents() []string {
	if f.alerts == nil || f.alerts.lowUptime == nil {
		return nil
	}
	var names []string
	for _, r := range f.alerts.lowUptime.Rows {
		// Sums[0] is the uptime in thousandths of a percent.
		if float64(r.Sums[0])/1000 < minAgentUptimePct {
			names = append(names, fmt.Sprintf("%s (%s)", r.Keys[0], fmtPct(float64(r.Sums[0])/1000)))
		}
	}
	return names
}

// critIncidents counts the open incidents listed of severity 8+ (they
// come most severe first).
func (a *alertFacts) critIncidents() int64 {
	var n int64
	for _, r := range a.incidents.Rows {
		if r.Sums[0] >= reportCritSeverity {
			n++
		}
	}
	return n
}

func (b *Builder) recommendSection(f *reportFacts) model.Section {
	const id, title = "recommendations", "Recommendations"
	rs := b.recommendations(f)
	if len(rs) == 0 {
		return emptySection(id, title, "Every figure of this report is within its threshold: no recommendation.")
	}
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{List: rs}}}
}
