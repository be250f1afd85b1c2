package reports

import (
	"fmt"
	"strconv"
	"time"

	"netmon/app/reports/model"
	"netmon/store"
)

// The sections of the traffic report (spec 4.3), shared by the
// enterprise report.

// Empty notes of the sources that are not configured.
const (
	noTrafficSource = "No traffic source is configured."
	noFlowSource    = "No flow data source is configured."
	noDeepSource    = "No agent deep-collection source is configured."
	noAlertSource   = "No alert source is configured."
	noAI            = "No AI analyses in this period (the AI assistant is not configured)."
)

func (b *Builder) dailySection(f *reportFacts) model.Section {
	const id, title = "daily-traffic", "Daily traffic"
	t := f.traffic
	if t == nil {
		return emptySection(id, title, noTrafficSource)
	}
	if t.minutes == 0 {
		return emptySection(id, title, "No traffic was recorded in this period.")
	}
	ch := &model.Chart{Kind: model.ChartBars, Title: "Traffic per day", Unit: "bytes",
		Series: []model.Series{{Name: "Received", Values: t.dayRx}, {Name: "Sent", Values: t.dayTx}}}
	tb := &model.Table{Columns: []model.Column{textCol("Day"), numCol("Received"), numCol("Sent"), numCol("Total")}}
	for i, d := range f.p.days {
		ch.Labels = append(ch.Labels, fmtDate(d, b.loc))
		tb.Rows = append(tb.Rows, []string{fmtDate(d, b.loc), fmtBytes(t.dayRx[i]), fmtBytes(t.dayTx[i]), fmtBytes(t.dayRx[i] + t.dayTx[i])})
	}
	tb.Rows = append(tb.Rows, []string{"Total", fmtBytes(t.rx), fmtBytes(t.tx), fmtBytes(t.total())})
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Chart: ch}, {Table: tb}}}
}

func (b *Builder) destinationsSection(f *reportFacts) model.Section {
	const id, title = "destinations", "Top destinations"
	d := f.destinations
	switch {
	case d == nil:
		return emptySection(id, title, noFlowSource)
	case d.addrs == 0:
		return emptySection(id, title, "No flows were recorded in this period.")
	case !d.geo:
		return emptySection(id, title, "Destinations cannot be placed: no geo database (country and ASN) is configured.")
	}
	caption := "By country"
	if d.total > d.addrs {
		of := ""
		if d.atLeast {
			of = "at least "
		}
		caption += fmt.Sprintf(" (the %s busiest of %s%s destination addresses)", fmtCount(int64(d.addrs)), of, fmtCount(int64(d.total)))
	}
	return model.Section{ID: id, Title: title, Blocks: []model.Block{
		{Table: keyTable(caption, "Country", d.countries)},
		{Table: keyTable("By network (ASN)", "Network", d.asns)},
	}}
}

// keyTable is the first topN of a ranked list.
func keyTable(caption, key string, rs []keyBytes) *model.Table {
	tb := &model.Table{Caption: caption, Columns: []model.Column{textCol(key), numCol("Bytes")}}
	for i, r := range rs {
		if i == topN {
			tb.More = len(rs) - topN
			break
		}
		tb.Rows = append(tb.Rows, []string{r.key, fmtBytes(float64(r.bytes))})
	}
	return tb
}

func (b *Builder) processesSection(f *reportFacts) model.Section {
	const id, title = "processes", "Processes"
	switch {
	case f.procs == nil:
		return emptySection(id, title, noDeepSource)
	case len(f.procs.Rows) == 0:
		return emptySection(id, title, "No agent reported process traffic in this period.")
	}
	tb := topTable("Top processes by bytes, from the agents' deep collection",
		[]model.Column{textCol("Process"), numCol("Received"), numCol("Sent"), numCol("Total"), numCol("Agents")}, f.procs,
		func(r store.ReportRow) []string {
			return []string{r.Keys[0], fmtBytes(float64(r.Sums[0])), fmtBytes(float64(r.Sums[1])),
				fmtBytes(float64(r.Sums[0] + r.Sums[1])), fmtCount(r.Sums[2])}
		})
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Table: tb}}}
}

func (b *Builder) dnsSection(f *reportFacts) model.Section {
	const id, title = "dns", "DNS"
	switch {
	case f.dns == nil:
		return emptySection(id, title, noDeepSource)
	case len(f.dns.Rows) == 0:
		return emptySection(id, title, "No agent reported DNS queries in this period.")
	}
	tb := topTable("Top queried names", []model.Column{textCol("Name"), numCol("Queries"), numCol("Responses"), numCol("Agents")}, f.dns,
		func(r store.ReportRow) []string {
			return []string{r.Keys[0], fmtCount(r.Sums[0]), fmtCount(r.Sums[1]), fmtCount(r.Sums[2])}
		})
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Table: tb}}}
}

func (b *Builder) protocolsSection(f *reportFacts) model.Section {
	const id, title = "protocols", "Protocols"
	switch {
	case f.protocols == nil:
		return emptySection(id, title, noFlowSource)
	case len(f.protocols.Rows) == 0:
		return emptySection(id, title, "No flows were recorded in this period.")
	}
	tb := topTable("Flows by IP protocol", []model.Column{textCol("Protocol"), numCol("Bytes"), numCol("Packets"), numCol("Flows")}, f.protocols,
		func(r store.ReportRow) []string {
			return []string{protoName(r.Keys[0]), fmtBytes(float64(r.Sums[0])), fmtCount(r.Sums[1]), fmtCount(r.Sums[2])}
		})
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Table: tb}}}
}

func (b *Builder) alertsSection(f *reportFacts) model.Section {
	const id, title = "alerts", "Alerts"
	a := f.alerts
	switch {
	case a == nil:
		return emptySection(id, title, noAlertSource)
	case a.events == 0:
		return emptySection(id, title, "No alerts were raised in this period.")
	}
	var crit int64
	for _, r := range a.severities.Rows {
		if n, _ := strconv.Atoi(r.Keys[0]); n >= reportCritSeverity {
			crit += r.Sums[0]
		}
	}
	kinds := topTable("By kind", []model.Column{textCol("Kind"), numCol("Events"), numCol("Occurrences")}, a.kinds,
		func(r store.ReportRow) []string { return []string{r.Keys[0], fmtCount(r.Sums[0]), fmtCount(r.Sums[1])} })
	sev := topTable("By severity (0-10)", []model.Column{textCol("Severity"), numCol("Events")}, a.severities,
		func(r store.ReportRow) []string { return []string{r.Keys[0], fmtCount(r.Sums[0])} })
	keys := topTable("Top keys", []model.Column{textCol("Kind"), textCol("Key"), numCol("Events"), numCol("Occurrences"), numCol("Highest severity")}, a.keys,
		func(r store.ReportRow) []string {
			return []string{r.Keys[0], r.Keys[1], fmtCount(r.Sums[0]), fmtCount(r.Sums[1]), strconv.FormatInt(r.Sums[2], 10)}
		})
	return model.Section{ID: id, Title: title, Blocks: []model.Block{
		{Figures: []model.Figure{{Label: "Alert events", Value: fmtCount(a.events)}, {Label: "Critical (severity 8+)", Value: fmtCount(crit)}}},
		{Table: kinds}, {Table: sev}, {Table: keys},
	}}
}

func (b *Builder) aiSection(f *reportFacts) model.Section {
	const id, title = "ai", "AI analyses"
	switch {
	case !f.aiSource:
		return emptySection(id, title, noAI)
	case len(f.ai) == 0:
		return emptySection(id, title, "No AI analyses in this period.")
	}
	tb := &model.Table{Caption: "The latest analyses", Columns: []model.Column{textCol("Time"), textCol("Title"), textCol("Summary")}}
	for _, a := range f.ai {
		tb.Rows = append(tb.Rows, []string{fmtTime(a.At, b.loc), a.Title, a.Summary})
	}
	return model.Section{ID: id, Title: title, Blocks: []model.Block{{Table: tb}}}
}

// unixAt is a Unix-seconds column as a time.
func unixAt(s int64) time.Time { return time.Unix(s, 0) }
