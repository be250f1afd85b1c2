package render

import (
	"slices"
	"strconv"
	"time"

	"netmon/app/reports/model"
)

// Bounds applied to the model before either renderer runs, so the HTML
// and the PDF print the same rows. The builder already keeps tables to a
// top N; these defend against a model that does not.
const (
	// maxTableRows is the budget of table rows for the whole report
	// (about 22 A4 pages); it is shared out so that small tables stay
	// whole and the largest ones are cut.
	maxTableRows = 1000
	// maxListItems bounds one bulleted list.
	maxListItems = 200
)

// page is the report as both renderers print it: every string formatted
// once, tables and lists bounded, charts laid out.
type page struct {
	Title     string
	Site      string // "Site: all sites"
	Range     string // "Range: 2026-10-29 00:00 – 2026-11-28 00:00 Europe/Istanbul (30 days)"
	Generated string // "Generated: 2026-11-28 06:00 Europe/Istanbul"
	DataSHA   string // "Data SHA-256: <hex>"
	Hub       string // "Hub: <hub>" or ""
	Sections  []section
}

type section struct {
	ID, Title string
	Empty     string
	Blocks    []block
}

// block is one model.Block; exactly one of its fields is set.
type block struct {
	Paragraph string
	Figures   []model.Figure
	Table     *table
	Chart     *chartLayout
	List      []string
	ListMore  string // "and N more" when the list was cut
}

type table struct {
	Caption string
	Columns []model.Column
	Rows    [][]string // each exactly len(Columns) cells
	More    string     // "and N more" or ""
	moreN   int        // the N of More
}

// moreLine is the line printed under a cut table or list.
func moreLine(n int) string {
	if n <= 0 {
		return ""
	}
	return "and " + groupDigits(n) + " more"
}

// moreLineAtLeast is moreLine for a count that is a lower bound (a table
// of rolled-up days that kept only their busiest keys).
func moreLineAtLeast(n int, atLeast bool) string {
	switch {
	case !atLeast:
		return moreLine(n)
	case n <= 0:
		return "and more, not counted"
	}
	return "and at least " + groupDigits(n) + " more"
}

// groupDigits writes n with a space every three digits ("1 234"), the
// form the model's figures use.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ' ')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// newPage prepares r for printing.
func newPage(r *model.Report) *page {
	loc, zone := time.UTC, "UTC"
	if r.Timezone != "" {
		zone = clean(r.Timezone)
		if l, err := time.LoadLocation(r.Timezone); err == nil {
			loc = l
		} else {
			loc = nil // unknown here: print the times as stored, still naming the zone asked for
		}
	}
	at := func(t time.Time) string {
		if loc != nil {
			t = t.In(loc)
		}
		return t.Format("2006-01-02 15:04")
	}
	p := &page{
		Title:     clean(r.Title),
		Site:      "Site: all sites",
		Range:     "Range: " + at(r.From) + " – " + at(r.To) + " " + zone,
		Generated: "Generated: " + at(r.GeneratedAt) + " " + zone,
		DataSHA:   "Data SHA-256: " + r.DataSHA256(),
	}
	if p.DataSHA == "Data SHA-256: " { // the model cannot be encoded (a NaN): say so rather than print nothing
		p.DataSHA += "unavailable"
	}
	if r.Days == 1 {
		p.Range += " (1 day)"
	} else if r.Days > 0 {
		p.Range += " (" + strconv.Itoa(r.Days) + " days)"
	}
	if r.Site != "" {
		p.Site = "Site: " + clean(r.Site)
	}
	if r.Hub != "" {
		p.Hub = "Hub: " + clean(r.Hub)
	}

	limit := rowLimit(r, maxTableRows)
	for _, s := range r.Sections {
		ps := section{ID: clean(s.ID), Title: clean(s.Title), Empty: clean(s.Empty)}
		if s.Empty == "" {
			for _, b := range s.Blocks {
				if pb, ok := newBlock(b, limit); ok {
					ps.Blocks = append(ps.Blocks, pb)
				}
			}
		}
		p.Sections = append(p.Sections, ps)
	}
	return p
}

func newBlock(b model.Block, rowLimit int) (block, bool) {
	switch {
	case b.Paragraph != "":
		return block{Paragraph: clean(b.Paragraph)}, true
	case len(b.Figures) > 0:
		return block{Figures: cleanFigures(b.Figures)}, true
	case b.Table != nil:
		return block{Table: newTable(b.Table, rowLimit)}, true
	case b.Chart != nil:
		l := layoutChart(cleanChart(b.Chart))
		return block{Chart: &l}, true
	case len(b.List) > 0:
		items := b.List
		more := 0
		if len(items) > maxListItems {
			items, more = items[:maxListItems], len(items)-maxListItems
		}
		return block{List: cleanAll(items), ListMore: moreLine(more)}, true
	}
	return block{}, false
}

func newTable(t *model.Table, rowLimit int) *table {
	cols := t.Columns
	if len(cols) == 0 { // headerless table: as wide as its widest row
		n := 0
		for _, r := range t.Rows {
			n = max(n, len(r))
		}
		cols = make([]model.Column, n)
	}
	rows := t.Rows
	more := t.More
	if len(rows) > rowLimit {
		more += len(rows) - rowLimit
		rows = rows[:rowLimit]
	}
	cc := make([]model.Column, len(cols))
	for i, c := range cols {
		cc[i] = model.Column{Title: clean(c.Title), Right: c.Right}
	}
	out := &table{Caption: clean(t.Caption), Columns: cc, More: moreLineAtLeast(more, t.MoreAtLeast), moreN: more, Rows: make([][]string, len(rows))}
	for i, r := range rows {
		c := make([]string, len(cols)) // padded or cut to the columns
		for j := range min(len(r), len(c)) {
			c[j] = clean(r[j])
		}
		out.Rows[i] = c
	}
	return out
}

// rowLimit is the largest per-table row count that keeps the report's
// table rows within budget: tables smaller than it stay whole.
func rowLimit(r *model.Report, budget int) int {
	var sizes []int
	total := 0
	for _, s := range r.Sections {
		if s.Empty != "" {
			continue
		}
		for _, b := range s.Blocks {
			if b.Paragraph == "" && len(b.Figures) == 0 && b.Table != nil {
				sizes = append(sizes, len(b.Table.Rows))
				total += len(b.Table.Rows)
			}
		}
	}
	if total <= budget {
		return total
	}
	slices.Sort(sizes)
	for i, n := range sizes {
		k := len(sizes) - i
		if n*k > budget {
			return budget / k
		}
		budget -= n
	}
	return budget // not reached: total > budget means some table is cut
}
