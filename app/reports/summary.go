package reports

import (
	"fmt"

	"netmon/app/reports/model"
)

// The executive summary: the period in a few sentences, each stating one
// fact with its number, written from the data (no sentence without a
// figure, none about a missing source).

// summarySection is the summary of a traffic or enterprise report.
func (b *Builder) summarySection(f *reportFacts) model.Section {
	s := model.Section{ID: "summary", Title: "Executive summary"}
	var figs []model.Figure
	var sentences []string
	if t := f.traffic; t != nil && t.minutes > 0 {
		sentences = append(sentences, trafficSentence(t, len(f.p.days)))
		i := t.busiest()
		day := f.p.days[i]
		sentences = append(sentences, fmt.Sprintf("The busiest day was %s (%s) with %s.",
			fmtDate(day, b.loc), day.Weekday(), fmtBytes(t.dayRx[i]+t.dayTx[i])))
		fig := model.Figure{Label: "Total traffic", Value: fmtBytes(t.total())}
		if g, ok := t.growth(); ok {
			fig.Note = fmtChange(g) + " on the previous period"
		}
		figs = append(figs, fig, model.Figure{Label: "Busiest day", Value: fmtDate(day, b.loc), Note: fmtBytes(t.dayRx[i] + t.dayTx[i])})
	} else if t != nil {
		sentences = append(sentences, "No traffic was recorded in this period.")
	}
	if d := f.destinations; d != nil && d.geo && len(d.countries) > 0 {
		sentences = append(sentences, fmt.Sprintf("The top destination country was %s with %s, and the top network %s with %s.",
			d.countries[0].key, fmtBytes(float64(d.countries[0].bytes)), d.asns[0].key, fmtBytes(float64(d.asns[0].bytes))))
	}
	if a := f.alerts; a != nil {
		if a.events == 0 {
			sentences = append(sentences, "No alerts were raised.")
		} else {
			k := a.kinds.Rows[0]
			sentences = append(sentences, fmt.Sprintf("%s %s raised; the most frequent kind was %s (%s).",
				fmtCount(a.events), pluralOf(a.events, "alert was", "alerts were"), k.Keys[0], fmtCount(k.Sums[0])))
		}
		figs = append(figs, model.Figure{Label: "Alerts", Value: fmtCount(a.events)})
	}
	if len(sentences) == 0 {
		s.Empty = "No data was recorded in this period."
		return s
	}
	for _, p := range sentences {
		s.Blocks = append(s.Blocks, model.Block{Paragraph: p})
	}
	if len(figs) > 0 {
		s.Blocks = append(s.Blocks, model.Block{Figures: figs})
	}
	return s
}

// trafficSentence states the total and its change on the previous period.
func trafficSentence(t *trafficFacts, days int) string {
	s := fmt.Sprintf("Total traffic was %s (%s received, %s sent)", fmtBytes(t.total()), fmtBytes(t.rx), fmtBytes(t.tx))
	prev := fmt.Sprintf("the previous %d %s", days, pluralOf(int64(days), "day", "days"))
	if g, ok := t.growth(); ok {
		return s + fmt.Sprintf(", %s on %s (%s).", fmtChange(g), prev, fmtBytes(t.prevTotal()))
	}
	return s + ", with no traffic recorded in " + prev + "."
}
