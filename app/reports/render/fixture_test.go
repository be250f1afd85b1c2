package render

import (
	"fmt"
	"math"
	"time"

	"netmon/app/reports/model"
)

// hostile is a device name a peer could send; it must print as text.
const hostile = "<script>alert(1)</script>"

// testReport is a realistic enterprise report: figures, a 30-day stacked
// bar chart, a 3-series line chart, tables with rows left out, an empty
// section, a list, Turkish and other non-ASCII names and a hostile name.
func testReport() *model.Report {
	ist := time.FixedZone("+03", 3*3600)
	from := time.Date(2026, 10, 29, 0, 0, 0, 0, ist)
	labels := make([]string, 30)
	down, up := make([]float64, 30), make([]float64, 30)
	p50, p95, p99 := make([]float64, 30), make([]float64, 30), make([]float64, 30)
	for i := range labels {
		labels[i] = from.AddDate(0, 0, i).Format("01-02")
		// A weekly rhythm: quieter weekends, so the chart is not flat.
		week := 1 + 0.35*math.Sin(float64(i)*2*math.Pi/7)
		down[i] = math.Round(31e9 * week * (1 + float64(i)/60))
		up[i] = math.Round(9e9 * week)
		p50[i] = 180e6 * week
		p95[i] = 520e6 * week
		p99[i] = 790e6 * week
	}
	dest := &model.Table{
		Caption: "Top destinations by volume",
		Columns: []model.Column{{Title: "Host"}, {Title: "Country"}, {Title: "ASN"}, {Title: "Bytes", Right: true}, {Title: "Share", Right: true}},
		More:    412,
	}
	hosts := []string{"ağ-geçidi.şirket.com.tr", hostile, "müller-straße.example.de", "café.example.fr", "İzmir-ofis.example.tr"}
	countries := []string{"Türkiye", "Deutschland", "France", "United States", "Nederland"}
	for i := range 25 {
		dest.Rows = append(dest.Rows, []string{
			fmt.Sprintf("%s-%02d", hosts[i%len(hosts)], i),
			countries[i%len(countries)],
			fmt.Sprintf("AS%d Türk Telekom", 9121+i),
			fmt.Sprintf("%.1f GB", 240.0-float64(i)*8.5),
			fmt.Sprintf("%.1f %%", 19.4-float64(i)*0.7),
		})
	}
	devices := &model.Table{
		Caption: "Device health",
		Columns: []model.Column{{Title: "Device"}, {Title: "Site"}, {Title: "Availability", Right: true}, {Title: "p95 utilisation", Right: true}},
		Rows: [][]string{
			{"İstanbul-çekirdek-sw01", "Kadıköy", "99.98 %", "41.2 %"},
			{"fw-Ağ-Geçidi", "Kadıköy", "100.00 %", "63.9 %"},
			{"Şişli-ap-ğüı", "Şişli", "97.41 %", "12.0 %"},
			{hostile, "Üsküdar", "88.10 %", "91.7 %"},
			{"müller-straße-ap", "Berlin", "99.50 %", "22.4 %"},
		},
		More: 3,
	}
	return &model.Report{
		Type:        model.TypeEnterprise,
		Title:       "Enterprise report",
		Site:        "İstanbul-Kadıköy",
		Days:        30,
		From:        from,
		To:          from.AddDate(0, 0, 30),
		GeneratedAt: time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC),
		Timezone:    "Europe/Istanbul",
		Hub:         "https://netmon.example.com.tr",
		Sections: []model.Section{
			{ID: "summary", Title: "Executive summary", Blocks: []model.Block{
				{Paragraph: "Traffic grew 12 % on the previous 30 days; the busiest device was fw-Ağ-Geçidi. Two SLA targets were missed."},
				{Figures: []model.Figure{
					{Label: "Total traffic", Value: "1.24 TB", Note: "+12 % on the previous period"},
					{Label: "Peak rate", Value: "842 Mbit/s"},
					{Label: "Alerts", Value: "37", Note: "5 critical"},
					{Label: "Health score", Value: "92 / 100"},
					{Label: "Agents reporting", Value: "14 of 15"},
				}},
			}},
			{ID: "daily-traffic", Title: "Daily traffic", Blocks: []model.Block{
				{Chart: &model.Chart{Kind: model.ChartBars, Title: "Traffic per day", Unit: "bytes", Labels: labels,
					Series: []model.Series{{Name: "Download", Values: down}, {Name: "Upload", Values: up}}}},
			}},
			{ID: "banding", Title: "Bandwidth banding", Blocks: []model.Block{
				{Chart: &model.Chart{Kind: model.ChartLine, Title: "Rate percentiles per day", Unit: "bit/s", Labels: labels,
					Series: []model.Series{{Name: "p50", Values: p50}, {Name: "p95", Values: p95}, {Name: "p99 (Şişli)", Values: p99}}}},
			}},
			{ID: "top-destinations", Title: "Top destinations", Blocks: []model.Block{{Table: dest}}},
			{ID: "device-health", Title: "Device health", Blocks: []model.Block{{Table: devices}}},
			{ID: "ai", Title: "AI analyses", Empty: "No AI analysis in this range: the AI feature is off."},
			{ID: "recommendations", Title: "Recommendations", Blocks: []model.Block{{List: []string{
				"Raise the capacity of fw-Ağ-Geçidi: p95 utilisation 63.9 % (Device health).",
				"Check " + hostile + ": availability 88.10 % is below the 99.5 % target.",
				"Review DNS resolvers in Şişli: 4.2 % of queries failed.",
			}}}},
		},
	}
}
