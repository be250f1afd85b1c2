package reports

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"netmon/app/compliance"
	"netmon/app/reports/model"
)

// The compliance report (spec 4.3): the ISO 27001:2022 Annex A control
// map with the ISMS registers' statement of applicability and evidence
// pointers, and the state of the compliance log.

// annexThemes names the four Annex A annexThemes by their number.
var annexThemes = map[string]string{"5": "Organizational", "6": "People", "7": "Physical", "8": "Technological"}

func (b *Builder) complianceSections(ctx context.Context, p reportPeriod) ([]model.Section, error) {
	controls, err := b.controlsSection(ctx)
	if err != nil {
		return nil, err
	}
	logSec, err := b.complianceLogSection(ctx)
	if err != nil {
		return nil, err
	}
	return []model.Section{controls[0], controls[1], logSec}, nil
}

// controlsSection is the summary of the SoA and the 93-control map.
func (b *Builder) controlsSection(ctx context.Context) ([2]model.Section, error) {
	sum := model.Section{ID: "summary", Title: "Executive summary"}
	sec := model.Section{ID: "controls", Title: "ISO 27001:2022 Annex A controls"}
	if b.deps.ISMS == nil {
		sum.Empty = "The ISMS registers are not available."
		sec.Empty = "The ISMS registers are not available: no statement of applicability to map."
		return [2]model.Section{sum, sec}, nil
	}
	soa, err := b.deps.ISMS.List(ctx, compliance.ISMSSoA)
	if err != nil {
		return [2]model.Section{}, err
	}
	risks, err := b.deps.ISMS.List(ctx, compliance.ISMSRisk)
	if err != nil {
		return [2]model.Section{}, err
	}
	lines := map[string]*compliance.SoAEntry{}
	for _, e := range soa {
		if e.SoA != nil {
			lines[e.Ref] = e.SoA
		}
	}
	treats := map[string][]string{} // control → the risks it treats
	for _, e := range risks {
		if e.Risk == nil {
			continue
		}
		for _, c := range e.Risk.Controls {
			treats[c] = append(treats[c], e.Ref)
		}
	}
	ids := compliance.AnnexAControls()
	tb := &model.Table{
		Caption: "Each control with its statement-of-applicability line and evidence pointers",
		Columns: []model.Column{textCol("Control"), textCol("Theme"), textCol("Applicable"), textCol("Implemented"), textCol("Justification"), textCol("Evidence"), textCol("Risks treated")},
	}
	var covered, applicable, implemented, partial int64
	for _, id := range ids {
		theme := annexThemes[strings.Split(id, ".")[1]]
		rs := treats[id]
		slices.Sort(rs)
		l := lines[id]
		if l == nil {
			tb.Rows = append(tb.Rows, []string{id, theme, "not assessed", "", "", "", strings.Join(rs, ", ")})
			continue
		}
		covered++
		app := "no"
		if l.Applicable {
			app = "yes"
			applicable++
			switch l.Implemented {
			case "yes":
				implemented++
			case "partial":
				partial++
			}
		}
		tb.Rows = append(tb.Rows, []string{id, theme, app, l.Implemented, l.Justification, l.Evidence, strings.Join(rs, ", ")})
	}
	sec.Blocks = []model.Block{{Table: tb}}
	n := int64(len(ids))
	if covered == 0 {
		sum.Blocks = []model.Block{{Paragraph: fmt.Sprintf("No statement of applicability is recorded: none of the %d Annex A controls is assessed.", n)}}
	} else {
		sum.Blocks = []model.Block{
			{Paragraph: fmt.Sprintf("The statement of applicability covers %s of the %d Annex A controls (%s).", fmtCount(covered), n, fmtPct(float64(covered)/float64(n)*100))},
			{Paragraph: fmt.Sprintf("%s %s applicable: %s implemented, %s partially, %s not yet.",
				fmtCount(applicable), pluralOf(applicable, "control is", "controls are"), fmtCount(implemented), fmtCount(partial), fmtCount(applicable-implemented-partial))},
			{Figures: []model.Figure{
				{Label: "Controls assessed", Value: fmtCount(covered) + " / " + fmtCount(n)},
				{Label: "Applicable", Value: fmtCount(applicable)},
				{Label: "Implemented", Value: fmtCount(implemented)},
				{Label: "Risks in the register", Value: fmtCount(int64(len(risks)))},
			}},
		}
	}
	return [2]model.Section{sum, sec}, nil
}

// complianceLogSection is the compliance log's state: chain, last
// checkpoint, last seal and its time-stamp.
func (b *Builder) complianceLogSection(ctx context.Context) (model.Section, error) {
	const id, title = "compliance-log", "Compliance log"
	if b.deps.Compliance == nil {
		return emptySection(id, title, "The compliance log is off: no chain, checkpoint or seal to report."), nil
	}
	st, err := b.deps.Compliance.Status(ctx)
	if err != nil {
		return model.Section{}, err
	}
	if !st.Config.Enabled {
		return emptySection(id, title, "The compliance log is off: no chain, checkpoint or seal to report."), nil
	}
	last := "none"
	if st.LastRecordTS > 0 {
		last = fmtTime(time.Unix(st.LastRecordTS, 0), b.loc)
	}
	figs := []model.Figure{
		{Label: "Records in the chain", Value: fmtCount(st.Records), Note: fmt.Sprintf("retention %d days", st.Config.RetentionDays)},
		{Label: "Last record", Value: last},
		{Label: "Signing key", Value: noneIfEmpty(st.Config.KeyID)},
	}
	tb := &model.Table{Caption: "Checkpoints", Columns: []model.Column{textCol("Kind"), textCol("Period"), numCol("Records"), textCol("Root"), textCol("Signed"), textCol("Time-stamp")}}
	if h := st.LastHourly; h != nil {
		tb.Rows = append(tb.Rows, []string{"Last hourly checkpoint", h.Hour, fmtCount(int64(h.Size)), shortRoot(h.Root), fmtTime(time.Unix(h.SignedAt, 0), b.loc), "-"})
	} else {
		tb.Rows = append(tb.Rows, []string{"Last hourly checkpoint", "none", "", "", "", ""})
	}
	if d := st.LastDaily; d != nil {
		tb.Rows = append(tb.Rows, []string{"Last daily seal", d.Day, fmtCount(int64(d.Size)), shortRoot(d.Root), fmtTime(time.Unix(d.SignedAt, 0), b.loc), stampOf(d.TSAStatus)})
	} else {
		tb.Rows = append(tb.Rows, []string{"Last daily seal", "none", "", "", "", ""})
	}
	sec := model.Section{ID: id, Title: title, Blocks: []model.Block{{Figures: figs}, {Table: tb}}}
	var warn []string
	if st.TimeDrift {
		warn = append(warn, "The last checkpoint's clock is ahead of the system clock (time drift).")
	}
	if st.WORMErrors > 0 {
		warn = append(warn, fmt.Sprintf("%s %s to the WORM directory failed; the last: %s", fmtCount(st.WORMErrors), pluralOf(st.WORMErrors, "write", "writes"), st.WORMError))
	}
	if len(warn) > 0 {
		sec.Blocks = append(sec.Blocks, model.Block{List: warn})
	}
	return sec, nil
}

// stampOf says what the seal's RFC 3161 time-stamp is.
func stampOf(status string) string {
	switch {
	case status == "ok":
		return "time-stamped"
	case status == "none" || status == "":
		return "not time-stamped"
	case strings.HasPrefix(status, "error:"):
		return "failed (" + strings.TrimPrefix(status, "error:") + ")"
	}
	return status
}

// short is the first 16 hex digits of a root.
func shortRoot(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

func noneIfEmpty(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
