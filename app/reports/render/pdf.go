package render

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"netmon/app/reports/model"
)

// A4 portrait in millimetres.
const (
	pageW      = 210.0
	pageH      = 297.0
	marginX    = 15.0
	marginTop  = 15.0
	bodyBottom = pageH - 18 // the footer lives below
	contentW   = pageW - 2*marginX
	// maxPages bounds a PDF: past it the rest is left out with a note.
	// newPage's row budget keeps a real report far below it.
	maxPages = 40
	// cutReserve is kept free at the bottom of the last page for the
	// notes that say what the page budget cut.
	cutReserve = 9.0
	// mmPerPt converts font sizes (points) to millimetres.
	mmPerPt = 25.4 / 72
	font    = "go"
	// nbAlias stands for the page count until fpdf knows it. It holds a
	// control character, which clean removes from the data, so a device
	// named "{nb}" still prints as itself.
	nbAlias = "\x01nb\x01"
)

// PDF writes r as an A4 PDF with the same text as HTML: vector charts,
// tables that repeat their header across pages, "Page N of M", and the
// Go fonts embedded (subset) so any Latin, Greek or Cyrillic name prints.
// Its dates come from r.GeneratedAt, so the same model gives the same bytes.
func PDF(w io.Writer, r *model.Report) error {
	if r == nil {
		return fmt.Errorf("render pdf: nil report")
	}
	p := newPage(r)
	f := fpdf.New("P", "mm", "A4", "")
	f.SetCatalogSort(true)
	f.SetCreationDate(r.GeneratedAt)
	f.SetModificationDate(r.GeneratedAt)
	f.SetProducer("netmon", false)
	f.SetCreator("netmon", false)
	f.SetTitle(p.Title, true)
	f.SetSubject(p.Site+"; "+p.Range, true)
	f.AliasNbPages(nbAlias)
	f.AddUTF8FontFromBytes(font, "", goregular.TTF)
	f.AddUTF8FontFromBytes(font, "B", gobold.TTF)
	f.SetMargins(marginX, marginTop, marginX)
	f.SetAutoPageBreak(false, 0) // pdfDoc.room breaks pages, to repeat table headers
	f.SetCellMargin(1.5)
	d := &pdfDoc{f: f, p: p}
	f.SetHeaderFunc(d.header)
	f.SetFooterFunc(d.footer)
	f.AddPage()
	d.body()
	if err := f.Output(w); err != nil {
		return fmt.Errorf("render pdf: %w", err)
	}
	return nil
}

type pdfDoc struct {
	f    *fpdf.Fpdf
	p    *page
	full bool // maxPages reached: nothing more is drawn
}

type rgb struct{ r, g, b int }

var (
	ink    = rgb{15, 23, 42}
	muted  = rgb{100, 116, 139}
	rule   = rgb{226, 232, 240}
	band   = rgb{248, 250, 252}
	accent = rgb{37, 99, 235}
)

func (d *pdfDoc) text(c rgb)                    { d.f.SetTextColor(c.r, c.g, c.b) }
func (d *pdfDoc) fill(c rgb)                    { d.f.SetFillColor(c.r, c.g, c.b) }
func (d *pdfDoc) draw(c rgb)                    { d.f.SetDrawColor(c.r, c.g, c.b) }
func (d *pdfDoc) font(style string, pt float64) { d.f.SetFont(font, style, pt) }

// hex parses a palette colour "#rrggbb".
func hex(s string) rgb {
	v, _ := strconv.ParseUint(s[1:], 16, 32)
	return rgb{int(v >> 16 & 0xff), int(v >> 8 & 0xff), int(v & 0xff)}
}

// room makes sure h millimetres fit below the cursor, starting a page if
// not; it reports false once the page budget is spent.
func (d *pdfDoc) room(h float64) bool {
	if d.full {
		return false
	}
	limit := bodyBottom
	if d.f.PageNo() >= maxPages {
		limit -= cutReserve // the last page keeps room for the cut notes
	}
	if d.f.GetY()+h <= limit {
		return true
	}
	if d.f.PageNo() >= maxPages {
		d.full = true
		return false
	}
	d.f.AddPage()
	return true
}

// header runs on every page: the first carries the report's heading,
// later ones a running title.
func (d *pdfDoc) header() {
	f := d.f
	if f.PageNo() == 1 {
		f.SetXY(marginX, marginTop)
		d.text(ink)
		d.font("B", 20)
		for _, line := range f.SplitText(d.p.Title, contentW) {
			f.SetX(marginX)
			f.CellFormat(contentW, 9, line, "", 1, "L", false, 0, "")
		}
		d.text(muted)
		d.font("", 9)
		for _, s := range []string{d.p.Site, d.p.Range, d.p.Generated} {
			for _, line := range f.SplitText(s, contentW) {
				f.SetX(marginX)
				f.CellFormat(contentW, 4.4, line, "", 1, "L", false, 0, "")
			}
		}
		y := f.GetY() + 2
		d.draw(ink)
		f.SetLineWidth(0.5)
		f.Line(marginX, y, pageW-marginX, y)
		f.SetY(y + 5)
		return
	}
	d.text(muted)
	d.font("", 7.5)
	f.SetXY(marginX, 8)
	f.CellFormat(contentW, 4, d.p.Title+" · "+d.p.Site, "", 0, "L", false, 0, "")
	d.draw(rule)
	f.SetLineWidth(0.2)
	f.Line(marginX, 12.5, pageW-marginX, 12.5)
	f.SetXY(marginX, marginTop)
}

func (d *pdfDoc) footer() {
	f := d.f
	d.draw(rule)
	f.SetLineWidth(0.2)
	f.Line(marginX, pageH-15, pageW-marginX, pageH-15)
	d.text(muted)
	d.font("", 7)
	f.SetXY(marginX, pageH-14)
	f.CellFormat(contentW-25, 3.6, d.p.DataSHA, "", 0, "L", false, 0, "")
	f.CellFormat(25, 3.6, "Page "+strconv.Itoa(f.PageNo())+" of "+nbAlias, "", 1, "R", false, 0, "")
	if d.p.Hub != "" {
		f.SetX(marginX)
		f.CellFormat(contentW-25, 3.6, d.p.Hub, "", 1, "L", false, 0, "")
	}
}

func (d *pdfDoc) body() {
	for i, s := range d.p.Sections {
		if !d.section(s) {
			d.text(accent)
			left := strconv.Itoa(len(d.p.Sections)-i) + " sections"
			if len(d.p.Sections)-i == 1 {
				left = "1 section"
			}
			d.note("B", "Report cut at "+strconv.Itoa(maxPages)+" pages: "+left+" not fully printed; the HTML report has them.")
			return
		}
	}
}

// note prints one line in the space cutReserve kept, once the page
// budget is spent.
func (d *pdfDoc) note(style, s string) {
	d.font(style, 8)
	d.f.SetXY(marginX, d.f.GetY()+0.8)
	d.f.CellFormat(contentW, 3.6, s, "", 1, "L", false, 0, "")
}

// section draws s and reports false when the page budget ran out.
func (d *pdfDoc) section(s section) bool {
	f := d.f
	// Keep the heading with the start of its content.
	first := 8.0
	if len(s.Blocks) > 0 {
		first = d.minHeight(s.Blocks[0])
	}
	if !d.room(13 + first) {
		return false
	}
	if f.GetY() > marginTop+1 {
		f.SetY(f.GetY() + 2)
	}
	f.Bookmark(s.Title, 0, -1)
	d.text(ink)
	if !d.lines(s.Title, "B", 13, marginX, contentW) {
		return false
	}
	y := f.GetY() + 0.5
	d.draw(rule)
	f.SetLineWidth(0.3)
	f.Line(marginX, y, pageW-marginX, y)
	f.SetY(y + 2.5)
	if s.Empty != "" {
		d.text(muted)
		return d.lines(s.Empty, "", 9.5, marginX, contentW)
	}
	for _, b := range s.Blocks {
		var ok bool
		switch {
		case b.Paragraph != "":
			d.text(ink)
			ok = d.lines(b.Paragraph, "", 9.5, marginX, contentW)
		case len(b.Figures) > 0:
			ok = d.figures(b.Figures)
		case b.Table != nil:
			ok = d.table(b.Table)
		case b.Chart != nil:
			ok = d.chart(b.Chart)
		case len(b.List) > 0:
			ok = d.list(b.List, b.ListMore)
		}
		if !ok {
			return false
		}
		f.SetY(f.GetY() + 2.5)
	}
	return true
}

// minHeight is the least of b that must fit under a section heading.
func (d *pdfDoc) minHeight(b block) float64 {
	switch {
	case b.Chart != nil:
		return 6 + b.Chart.H*contentW/b.Chart.W
	case len(b.Figures) > 0:
		return 20
	case b.Table != nil:
		return 16
	}
	return 8
}

// lines prints s wrapped to width w at x, line by line so a long
// paragraph breaks across pages.
func (d *pdfDoc) lines(s, style string, pt, x, w float64) bool {
	d.font(style, pt)
	lh := pt * mmPerPt * 1.35
	for _, line := range d.f.SplitText(s, w) {
		if !d.room(lh) {
			return false
		}
		d.f.SetX(x)
		d.f.CellFormat(w, lh, line, "", 1, "L", false, 0, "")
	}
	return true
}

func (d *pdfDoc) list(items []string, more string) bool {
	f := d.f
	for _, it := range items {
		d.font("", 9.5)
		if !d.room(4.5) {
			return false
		}
		d.text(accent)
		f.SetX(marginX)
		f.CellFormat(5, 4.5, "•", "", 0, "L", false, 0, "")
		d.text(ink)
		if !d.lines(it, "", 9.5, marginX+5, contentW-5) {
			return false
		}
		f.SetY(f.GetY() + 0.8)
	}
	if more != "" {
		d.text(muted)
		return d.lines(more, "", 8.5, marginX, contentW)
	}
	return true
}

// figures draws key figures as tiles, four to a row.
func (d *pdfDoc) figures(figs []model.Figure) bool {
	f := d.f
	const perRow, gap = 4, 3.0
	tw := (contentW - gap*(perRow-1)) / perRow
	for start := 0; start < len(figs); start += perRow {
		row := figs[start:min(start+perRow, len(figs))]
		type tile struct{ label, value, note []string }
		tiles := make([]tile, len(row))
		h := 0.0
		for i, fg := range row {
			d.font("", 7.5)
			t := tile{label: f.SplitText(fg.Label, tw-2)}
			if fg.Note != "" {
				t.note = f.SplitText(fg.Note, tw-2)
			}
			d.font("B", 13)
			t.value = f.SplitText(fg.Value, tw-2)
			tiles[i] = t
			h = max(h, float64(len(t.label)+len(t.note))*3.3+float64(len(t.value))*5.6+4)
		}
		if !d.room(h) {
			return false
		}
		y0 := f.GetY()
		for i, t := range tiles {
			x := marginX + float64(i)*(tw+gap)
			d.fill(band)
			d.draw(rule)
			f.SetLineWidth(0.2)
			f.Rect(x, y0, tw, h, "FD")
			d.fill(accent)
			f.Rect(x, y0, 0.9, h, "F")
			f.SetXY(x+1, y0+1.5)
			put := func(lines []string, style string, pt, lh float64, c rgb) {
				d.font(style, pt)
				d.text(c)
				for _, s := range lines {
					f.SetX(x + 1)
					f.CellFormat(tw-1, lh, s, "", 1, "L", false, 0, "")
				}
			}
			put(t.label, "", 7.5, 3.3, muted)
			put(t.value, "B", 13, 5.6, ink)
			put(t.note, "", 7.5, 3.3, muted)
		}
		f.SetY(y0 + h + gap)
	}
	f.SetY(f.GetY() - gap)
	return true
}

const (
	tablePt = 8.5
	tableLH = tablePt * mmPerPt * 1.3
)

// table draws t, repeating its header on each page it spans.
func (d *pdfDoc) table(t *table) bool {
	f := d.f
	widths := d.columnWidths(t)
	cells := func(row []string, style string) ([][]string, float64) {
		d.font(style, tablePt)
		out := make([][]string, len(row))
		n := 1
		for i, c := range row {
			out[i] = f.SplitText(c, widths[i])
			n = max(n, len(out[i]))
		}
		return out, float64(n)*tableLH + 1.6
	}
	titles := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		titles[i] = c.Title
	}
	head, headH := cells(titles, "B")
	drawRow := func(lines [][]string, h float64, style string, fill bool) {
		y := f.GetY()
		if fill {
			d.fill(band)
			f.Rect(marginX, y, contentW, h, "F")
		}
		d.font(style, tablePt)
		d.text(ink)
		x := marginX
		for i, ls := range lines {
			align := "L"
			if t.Columns[i].Right {
				align = "R"
			}
			for j, s := range ls {
				f.SetXY(x, y+0.8+float64(j)*tableLH)
				f.CellFormat(widths[i], tableLH, s, "", 0, align, false, 0, "")
			}
			x += widths[i]
		}
		d.draw(rule)
		f.SetLineWidth(0.2)
		f.Line(marginX, y+h, marginX+contentW, y+h)
		f.SetY(y + h)
	}
	header := func() {
		drawRow(head, headH, "B", true)
	}

	capH := 0.0
	if t.Caption != "" {
		capH = 5
	}
	first, firstH := [][]string(nil), 0.0
	if len(t.Rows) > 0 {
		first, firstH = cells(t.Rows[0], "")
	}
	if !d.room(capH + headH + firstH) {
		return false
	}
	if t.Caption != "" {
		d.text(ink)
		d.font("B", 9)
		f.SetX(marginX)
		f.CellFormat(contentW, capH, t.Caption, "", 1, "L", false, 0, "")
	}
	header()
	for i, row := range t.Rows {
		lines, h := first, firstH
		if i > 0 {
			lines, h = cells(row, "")
		}
		page := f.PageNo()
		if !d.room(h) {
			d.text(muted)
			d.note("", moreLine(len(t.Rows)-i+t.moreN))
			return false
		}
		if f.PageNo() != page {
			header()
		}
		drawRow(lines, h, "", false)
	}
	if t.More != "" {
		f.SetY(f.GetY() + 0.8)
		d.text(muted)
		return d.lines(t.More, "", 8, marginX, contentW)
	}
	return true
}

// columnWidths gives each column its natural width, then stretches or
// shrinks them to the content width; right-aligned (numeric) columns keep
// their width when shrinking and text columns wrap.
func (d *pdfDoc) columnWidths(t *table) []float64 {
	f := d.f
	n := len(t.Columns)
	w := make([]float64, n)
	d.font("B", tablePt)
	for i, c := range t.Columns {
		w[i] = f.GetStringWidth(c.Title)
	}
	d.font("", tablePt)
	for _, r := range t.Rows {
		for i, c := range r {
			w[i] = max(w[i], f.GetStringWidth(c))
		}
	}
	total := 0.0
	for i := range w {
		w[i] = math.Min(w[i]+3.2, contentW) // cell margins
		total += w[i]
	}
	if total <= contentW {
		for i := range w {
			w[i] *= contentW / total
		}
		return w
	}
	fixed, flex := 0.0, 0.0
	for i, c := range t.Columns {
		if c.Right {
			fixed += w[i]
		} else {
			flex += w[i]
		}
	}
	scale := (contentW - fixed) / flex
	if fixed >= contentW*0.6 || flex == 0 { // mostly numbers: shrink all alike
		for i := range w {
			w[i] *= contentW / total
		}
		return w
	}
	for i, c := range t.Columns {
		if !c.Right {
			w[i] *= scale
		}
	}
	return w
}

// chart draws a laid-out chart: chart units scale to the content width.
func (d *pdfDoc) chart(l *chartLayout) bool {
	f := d.f
	s := contentW / l.W
	if !d.room(6 + l.H*s) {
		return false
	}
	d.text(ink)
	d.font("B", 9)
	f.SetX(marginX)
	f.CellFormat(contentW, 5, l.Title, "", 1, "L", false, 0, "")
	ox, oy := marginX, f.GetY()
	X := func(v float64) float64 { return ox + v*s }
	Y := func(v float64) float64 { return oy + v*s }
	d.font("", l.Font*s/mmPerPt)
	d.text(rgb{71, 85, 105})
	f.SetLineWidth(0.2)
	for _, t := range l.YTicks {
		d.draw(rule)
		f.Line(X(l.X0), Y(t.Pos), X(l.X1), Y(t.Pos))
		f.Text(X(l.X0-6)-f.GetStringWidth(t.Label), Y(t.Pos+3.5), t.Label)
	}
	d.draw(rgb{148, 163, 184})
	f.Line(X(l.X0), Y(l.Y1), X(l.X1), Y(l.Y1))
	for _, t := range l.XTicks {
		f.Text(X(t.Pos)-f.GetStringWidth(t.Label)/2, Y(l.Y1+14), t.Label)
	}
	for _, b := range l.Bars {
		d.fill(hex(b.Color))
		f.Rect(X(b.X), Y(b.Y), b.W*s, b.H*s, "F")
	}
	f.SetLineWidth(2 * s)
	f.SetLineCapStyle("round")
	f.SetLineJoinStyle("round")
	for _, pl := range l.Lines {
		d.draw(hex(pl.Color))
		if len(pl.Points) == 1 {
			p := pl.Points[0]
			f.Line(X(p.X), Y(p.Y), X(p.X), Y(p.Y))
		}
		for i := 1; i < len(pl.Points); i++ {
			a, b := pl.Points[i-1], pl.Points[i]
			f.Line(X(a.X), Y(a.Y), X(b.X), Y(b.Y))
		}
	}
	f.SetLineCapStyle("butt")
	f.SetLineJoinStyle("miter")
	for _, li := range l.Legend {
		d.fill(hex(li.Color))
		f.Rect(X(li.X), Y(li.Y), 10*s, 10*s, "F")
		f.Text(X(li.X+14), Y(li.Y+9), li.Name)
	}
	f.SetY(oy + l.H*s)
	return true
}
