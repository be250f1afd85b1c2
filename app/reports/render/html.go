package render

import (
	"bufio"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"netmon/app/reports/model"
)

//go:embed report.html.tmpl
var htmlSource string

// htmlPage is parsed once; html/template escapes every string of the
// model for its context (text, attribute, SVG text), so a device named
// "<script>" prints as text. It is read-only after package init.
var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":    num,
	"add":    func(a, b float64) float64 { return a + b },
	"sub":    func(a, b float64) float64 { return a - b },
	"points": points,
}).Parse(htmlSource))

// HTML writes r as one self-contained HTML page: inline CSS, charts as
// inline SVG, nothing loaded from elsewhere. The same model gives the
// same bytes.
func HTML(w io.Writer, r *model.Report) error {
	if r == nil {
		return fmt.Errorf("render html: nil report")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := htmlPage.Execute(bw, newPage(r)); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	return nil
}

// num prints a chart coordinate with one decimal, trimmed ("12", "12.5").
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}

// points is an SVG polyline's points attribute.
func points(ps []point) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(num(p.X))
		b.WriteByte(',')
		b.WriteString(num(p.Y))
	}
	return b.String()
}
