package reports

import (
	"fmt"
	"strconv"

	"netmon/app/reports/model"
	"netmon/store"
)

// The sections the enterprise report adds to the traffic report (spec
// 4.3).

const (
	noSLA    = "SLA figures are not available (no SLA source is configured)."
	noHealth = "The network health score is not available (no health source is configured)."
)

func (b *Builder) capacitySection(f *reportFacts) model.Section {
	const id, title = "capacity", "Capacity"
	t := f.traffic
	if t == nil {
		return emptySection(id, title, noTrafficSource)
	}
	if t.minutes == 0 {
		return emptySection(id, title, "No traffic was recorded in this period.")
	}
	growth := model.Figure{Label: "Growth", Value: "n/a", Note: "no traffic in the previous period"}
	if g, ok := t.growth(); ok {
		growth = model.Figure{Label: "Growth", Value: fmtChange(g), Note: "previous period " + fmtBytes(t.prevTotal())}
	}
	i := t.busiest()
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Figures: []model.Figure{
		{Label: "Total traffic", Value: fmtBytes(t.total())},
		growth,
		{Label: "Peak day", Value: fmtDate(f.p.days[i], b.loc), Note: fmtBytes(t.dayRx[i] + t.dayTx[i])},
		{Label: "Daily average", Value: fmtBytes(t.total() / float64(len(f.p.days)))},
	}}}}
}

func (b *Builder) bandingSection(f *reportFacts) model.Section {
	const id, title = "banding", "Throughput banding"
	t := f.traffic
	if t == nil {
		return emptySection(id, title, noTrafficSource)
	}
	if t.minutes == 0 {
		return emptySection(id, title, "No traffic was recorded in this period.")
	}
	tb := &model.Table{
		Caption: fmt.Sprintf("Per-minute throughput (received + sent) over the %s minutes with traffic", fmtCount(int64(t.minutes))),
		Columns: []model.Column{textCol("Percentile"), numCol("Throughput")},
		Rows: [][]string{
			{"p50", fmtBits(t.p50)}, {"p95", fmtBits(t.p95)}, {"p99", fmtBits(t.p99)}, {"Maximum", fmtBits(t.max)},
		},
	}
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Table: tb}}}
}

func (b *Builder) slaSection(f *reportFacts) model.Section {
	const id, title = "sla", "Service levels (SLA)"
	s := f.sla
	if s == nil {
		return emptySection(id, title, noSLA)
	}
	figs := []model.Figure{
		{Label: "Agent uptime", Value: "n/a", Note: "no agent"},
		{Label: "Device availability", Value: "n/a", Note: "no device"},
		{Label: "Packet drop", Value: "n/a", Note: "no capture counted"},
	}
	if s.Agents > 0 {
		figs[0] = model.Figure{Label: "Agent uptime", Value: fmtPct(s.AgentUptimePct), Note: fmtCount(int64(s.Agents)) + " " + pluralOf(int64(s.Agents), "agent", "agents")}
	}
	if s.Devices > 0 {
		figs[1] = model.Figure{Label: "Device availability", Value: fmtPct(s.DeviceAvailabilityPct), Note: fmtCount(int64(s.Devices)) + " " + pluralOf(int64(s.Devices), "device", "devices")}
	}
	if s.HasPacketDrop {
		figs[2] = model.Figure{Label: "Packet drop", Value: fmtPct(s.PacketDropPct)}
	}
	sec := model.Section{ID: id, Title: title, Blocks: []model.Block{{Figures: figs}}}
	if len(s.Targets) > 0 {
		tb := &model.Table{Caption: "SLA targets", Columns: []model.Column{textCol("Target"), textCol("Metric"), textCol("Scope"), numCol("Threshold"), numCol("Measured"), textCol("Status")}}
		for i, ts := range s.Targets {
			if i == topN*2 {
				tb.More = len(s.Targets) - i
				break
			}
			tb.Rows = append(tb.Rows, []string{ts.Target.Name, ts.Target.Metric, targetScope(ts.Target),
				fmtPct(ts.Target.Threshold), measuredOf(ts), targetState(ts)})
		}
		sec.Blocks = append(sec.Blocks, model.Block{Table: tb})
	}
	return sec
}

// targetScope names a target's scope.
func targetScope(t SLATarget) string {
	switch {
	case t.Scope == "agent":
		return "agent " + strconv.FormatInt(t.AgentID, 10)
	case t.Scope == "device":
		return "device " + strconv.FormatInt(t.DeviceID, 10)
	case t.Site != "":
		return "site " + t.Site
	}
	return "all sites"
}

func measuredOf(ts TargetStatus) string {
	if ts.NoData {
		return "no data"
	}
	return fmtPct(ts.Measured)
}

func targetState(ts TargetStatus) string {
	switch {
	case ts.NoData:
		return "no data"
	case ts.Met:
		return "met"
	}
	return "breached"
}

func (b *Builder) healthSection(f *reportFacts) model.Section {
	const id, title = "health", "Network health score"
	h := f.health
	if h == nil {
		return emptySection(id, title, noHealth)
	}
	sec := model.Section{ID: id, Title: title, Blocks: []model.Block{{Figures: []model.Figure{
		{Label: "Health score", Value: strconv.Itoa(h.Score) + " / 100", Note: "at " + fmtTime(unixAt(h.ComputedAt), b.loc)},
	}}}}
	if len(h.Deductions) > 0 {
		tb := &model.Table{Caption: "Deductions", Columns: []model.Column{textCol("Reason"), numCol("Points"), textCol("Detail")}}
		for _, d := range h.Deductions {
			tb.Rows = append(tb.Rows, []string{d.Reason, strconv.Itoa(d.Points), d.Detail})
		}
		sec.Blocks = append(sec.Blocks, model.Block{Table: tb})
	}
	return sec
}

func (b *Builder) conversationsSection(f *reportFacts) model.Section {
	const id, title = "conversations", "Top conversations"
	switch {
	case f.convs == nil:
		return emptySection(id, title, noFlowSource)
	case len(f.convs.Rows) == 0:
		return emptySection(id, title, "No flows were recorded in this period.")
	}
	tb := topTable("Address pairs by bytes (flows)", []model.Column{textCol("Source"), textCol("Destination"), numCol("Bytes"), numCol("Packets"), numCol("Flows")}, f.convs,
		func(r store.ReportRow) []string {
			return []string{r.Keys[0], r.Keys[1], fmtBytes(float64(r.Sums[0])), fmtCount(r.Sums[1]), fmtCount(r.Sums[2])}
		})
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Table: tb}}}
}

func (b *Builder) applicationsSection(f *reportFacts) model.Section {
	const id, title = "applications", "DNS and application visibility"
	switch {
	case f.apps == nil:
		return emptySection(id, title, noDeepSource)
	case len(f.apps.Rows) == 0:
		return emptySection(id, title, "No agent reported TLS or HTTP names in this period.")
	}
	tb := topTable("TLS server names (SNI) and HTTP hosts by bytes", []model.Column{textCol("Host"), textCol("Seen as"), numCol("Bytes"), numCol("Connections"), numCol("Agents")}, f.apps,
		func(r store.ReportRow) []string {
			kind := r.Keys[1]
			switch kind {
			case "tls":
				kind = "TLS SNI"
			case "http":
				kind = "HTTP Host"
			}
			return []string{r.Keys[0], kind, fmtBytes(float64(r.Sums[0])), fmtCount(r.Sums[1]), fmtCount(r.Sums[2])}
		})
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Table: tb}}}
}

func (b *Builder) incidentsSection(f *reportFacts) model.Section {
	const id, title = "incidents", "Open incidents"
	switch {
	case f.alerts == nil:
		return emptySection(id, title, noAlertSource)
	case len(f.alerts.incidents.Rows) == 0:
		return emptySection(id, title, "No incident is open.")
	}
	tb := topTable("Incidents open now that were opened before the end of the period, most severe first",
		[]model.Column{numCol("ID"), textCol("Title"), textCol("State"), numCol("Severity"), numCol("Risk"), textCol("Opened")}, f.alerts.incidents,
		func(r store.ReportRow) []string {
			return []string{r.Keys[0], r.Keys[1], r.Keys[2], strconv.FormatInt(r.Sums[0], 10), strconv.FormatInt(r.Sums[1], 10),
				fmtTime(unixAt(r.Sums[2]), b.loc)}
		})
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Table: tb}}}
}
