package reports

import (
	"context"
	"fmt"
	"time"

	"netmon/app/reports/model"
	"netmon/store"
)

// Bounds of a report (issue 31: at most about 40 pages): each top list
// prints this many rows and says how many it left out.
const (
	// topN is the rows of a top list.
	topN = 10
	// topConversations is the rows of the conversations table.
	topConversations = 25
	// destCandidates is how many of the busiest destination addresses are
	// mapped to countries and ASNs: the heavy hitters carry the volume,
	// and a lookup per address of a million would not fit the time budget.
	destCandidates = 500
	// aiAnalyses is how many AI analyses the report prints.
	aiAnalyses = 3
)

// Builder builds a report's model from the stored data.
type Builder struct {
	deps BuildDeps
	loc  *time.Location
}

// NewBuilder returns a builder over deps (nil sources allowed).
func NewBuilder(deps BuildDeps) *Builder {
	loc := deps.Location
	if loc == nil {
		loc = time.UTC
	}
	return &Builder{deps: deps, loc: loc}
}

// reportPeriod is a report's range: its days in the report's zone.
type reportPeriod struct {
	from, to time.Time
	// days are the starts of the range's days, in order; a day ends at
	// the next one's start (or at to).
	days []time.Time
	cur  store.ReportScope
	// prev is the equal period before (the change of the summary).
	prev store.ReportScope
}

// reportPeriodOf is the days whole days ending at the start of now's day in
// loc: a report run on Monday morning covers up to Sunday midnight.
func reportPeriodOf(now time.Time, days int, site string, loc *time.Location) reportPeriod {
	n := now.In(loc)
	to := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	from := to.AddDate(0, 0, -days)
	p := reportPeriod{from: from, to: to}
	for d := from; d.Before(to); d = d.AddDate(0, 0, 1) {
		p.days = append(p.days, d)
	}
	prevFrom := from.AddDate(0, 0, -days)
	p.cur = store.ReportScope{From: from.Unix(), To: to.Unix(), Site: site}
	p.prev = store.ReportScope{From: prevFrom.Unix(), To: from.Unix(), Site: site}
	return p
}

// Build builds the report req asks for (req validated by the caller:
// Days > 0, Now set, Type known).
func (b *Builder) Build(ctx context.Context, req Request) (*model.Report, error) {
	p := reportPeriodOf(req.Now, req.Days, req.Site, b.loc)
	r := &model.Report{
		Type: req.Type, Site: req.Site, Days: req.Days,
		From: p.from, To: p.to,
		GeneratedAt: req.Now.In(b.loc), Timezone: b.loc.String(), Hub: b.deps.Hub,
	}
	var err error
	switch req.Type {
	case model.TypeCompliance:
		r.Title = "Compliance report"
		r.Sections, err = b.complianceSections(ctx, p)
	case model.TypeEnterprise:
		r.Title = "Enterprise report"
		r.Sections, err = b.trafficSections(ctx, p, true)
	default:
		r.Type, r.Title = model.TypeTraffic, "Traffic report"
		r.Sections, err = b.trafficSections(ctx, p, false)
	}
	if err != nil {
		return nil, fmt.Errorf("build %s report: %w", r.Type, err)
	}
	return r, nil
}

// trafficSections gathers the facts once and lays out the traffic
// report's sections, with the enterprise ones when enterprise is set.
func (b *Builder) trafficSections(ctx context.Context, p reportPeriod, enterprise bool) ([]model.Section, error) {
	f, err := b.gather(ctx, p, enterprise)
	if err != nil {
		return nil, err
	}
	secs := []model.Section{b.summarySection(f)}
	if enterprise {
		secs = append(secs, b.recommendSection(f))
	}
	secs = append(secs, b.dailySection(f))
	if enterprise {
		secs = append(secs, b.capacitySection(f), b.bandingSection(f), b.slaSection(f), b.healthSection(f))
	}
	secs = append(secs, b.destinationsSection(f))
	if enterprise {
		secs = append(secs, b.conversationsSection(f))
	}
	secs = append(secs, b.processesSection(f), b.dnsSection(f))
	if enterprise {
		secs = append(secs, b.applicationsSection(f))
	}
	secs = append(secs, b.protocolsSection(f), b.alertsSection(f))
	if enterprise {
		secs = append(secs, b.incidentsSection(f))
	}
	return append(secs, b.aiSection(f)), nil
}

// empty is a section with no data and its note.
func emptySection(id, title, note string) model.Section {
	return model.Section{ID: id, Title: title, Empty: note}
}

// topTable is a table of a top read: its columns, one formatted row per
// row read, and More the groups left out.
func topTable(caption string, cols []model.Column, t *store.ReportTop, row func(store.ReportRow) []string) *model.Table {
	tb := &model.Table{Caption: caption, Columns: cols, Rows: make([][]string, 0, len(t.Rows))}
	for _, r := range t.Rows {
		tb.Rows = append(tb.Rows, row(r))
	}
	if more := t.Total - len(t.Rows); more > 0 {
		tb.More = more
	}
	// A rolled day that kept only its busiest keys makes Total a lower
	// bound: the table says "at least".
	tb.MoreAtLeast = t.AtLeast
	return tb
}

// col and num are a left-aligned and a right-aligned column.
func textCol(title string) model.Column { return model.Column{Title: title} }
func numCol(title string) model.Column  { return model.Column{Title: title, Right: true} }
