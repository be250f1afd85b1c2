package render

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"testing"

	"netmon/app/reports/model"
)

// enterpriseReport is an enterprise report at its largest usual size:
// 15 sections, days-long charts, tables of 25 rows.
func enterpriseReport(days int) *model.Report {
	base := testReport()
	from := base.To.AddDate(0, 0, -days)
	labels := make([]string, days)
	series := func(names ...string) []model.Series {
		out := make([]model.Series, len(names))
		for si, n := range names {
			v := make([]float64, days)
			for i := range v {
				v[i] = math.Round(float64(si+1) * 7e9 * (1.2 + math.Sin(float64(i+si)*2*math.Pi/7)))
			}
			out[si] = model.Series{Name: n, Values: v}
		}
		return out
	}
	for i := range labels {
		labels[i] = from.AddDate(0, 0, i).Format("01-02")
	}
	table := func(caption string, cols ...string) *model.Table {
		t := &model.Table{Caption: caption, More: 118}
		for i, c := range cols {
			t.Columns = append(t.Columns, model.Column{Title: c, Right: i >= 2})
		}
		for r := range 25 {
			row := []string{fmt.Sprintf("şube-%02d.örnek.com.tr", r), fmt.Sprintf("AS%d Türk Telekom", 9121+r)}
			for range cols[2:] {
				row = append(row, fmt.Sprintf("%.1f GB", 300-float64(r)*9.7))
			}
			t.Rows = append(t.Rows, row)
		}
		return t
	}
	sec := func(id, title string, blocks ...model.Block) model.Section {
		return model.Section{ID: id, Title: title, Blocks: blocks}
	}
	chart := func(kind, title, unit string, names ...string) model.Block {
		return model.Block{Chart: &model.Chart{Kind: kind, Title: title, Unit: unit, Labels: labels, Series: series(names...)}}
	}
	r := *base
	r.Days, r.From = days, from
	r.Sections = []model.Section{
		base.Sections[0],
		sec("daily-traffic", "Daily traffic", chart(model.ChartBars, "Traffic per day", "bytes", "Download", "Upload")),
		sec("banding", "Bandwidth banding", chart(model.ChartLine, "Rate percentiles per day", "bit/s", "p50", "p95", "p99")),
		sec("destinations", "Top destinations", model.Block{Table: table("By volume", "Host", "ASN", "Bytes", "Share")}),
		sec("countries", "Countries and ASNs", model.Block{Table: table("By volume", "Country", "ASN", "Bytes", "Flows")}),
		sec("processes", "Processes", model.Block{Table: table("By volume", "Process", "Host", "Sent", "Received")}),
		sec("dns", "DNS", model.Block{Table: table("Top names", "Name", "Resolver", "Queries", "Failures")}),
		sec("protocols", "Protocols", chart(model.ChartBars, "Protocols per day", "bytes", "TCP", "UDP", "ICMP", "Other"),
			model.Block{Table: table("By volume", "Protocol", "Port", "Bytes", "Share")}),
		sec("alerts", "Alerts", model.Block{Table: table("Alerts", "Kind", "Device", "Count", "Last")}),
		base.Sections[5], // AI: empty
		sec("sla", "SLA", model.Block{Figures: base.Sections[0].Blocks[1].Figures}, model.Block{Table: table("Targets", "Target", "Site", "Measured", "Threshold")}),
		sec("capacity", "Capacity", chart(model.ChartLine, "Utilisation per day", "%", "core", "edge", "wan")),
		sec("conversations", "Top conversations", model.Block{Table: table("By volume", "Source", "Destination", "Bytes", "Packets")}),
		sec("applications", "Applications", model.Block{Table: table("By volume", "Application", "ASN", "Bytes", "Users")}),
		base.Sections[6], // recommendations
	}
	return &r
}

// TestEnterpriseBounds holds the enterprise report to its budget: the
// PDF at most 3 MB and maxPages pages.
func TestEnterpriseBounds(t *testing.T) {
	r := enterpriseReport(90)
	if len(r.Sections) != 15 {
		t.Fatalf("%d sections, want 15", len(r.Sections))
	}
	path := pdfFile(t, r)
	if pages := pdfPages(t, path); pages > maxPages {
		t.Errorf("pages = %d, want <= %d", pages, maxPages)
	}
	var b bytes.Buffer
	if err := PDF(&b, r); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 3<<20 {
		t.Errorf("PDF is %d bytes, want <= 3 MB", b.Len())
	}
	// The two Go fonts weigh 263 KB as files; fpdf embeds only the glyphs
	// used, so the whole report stays far below that (63 KB when written).
	if b.Len() > 200<<10 {
		t.Errorf("PDF is %d bytes: are the fonts still subset?", b.Len())
	}
}

// countingWriter counts what a renderer writes, without keeping it.
type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

func benchRender(b *testing.B, render func(io.Writer, *model.Report) error) {
	for _, days := range []int{30, 90} {
		b.Run(fmt.Sprintf("days=%d", days), func(b *testing.B) {
			r := enterpriseReport(days)
			b.ReportAllocs()
			var n countingWriter
			for b.Loop() {
				n = 0
				if err := render(&n, r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n), "bytes/report")
		})
	}
}

// BenchmarkHTML renders the enterprise report (15 sections, tables of 25
// rows) as HTML; the target for the whole report, model built, is 1 s.
func BenchmarkHTML(b *testing.B) { benchRender(b, HTML) }

// BenchmarkPDF renders the same report as PDF; the target for the whole
// report is 2 s and 3 MB.
func BenchmarkPDF(b *testing.B) { benchRender(b, PDF) }
