package reports

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/alerting/health"
	"netmon/app/reports/model"
	"netmon/store"
	"netmon/store/storetest"
)

// storeDeps are the sources over db with the seeded geo, SLA and health.
func storeDeps(db *store.DB, sla SLASource, h HealthScore) BuildDeps {
	return BuildDeps{Traffic: db, Flows: db, Deep: db, Alerts: db, Geo: seedGeo, SLA: sla, Health: h, Hub: "hub.test"}
}

// section returns the section id of r, failing when absent.
func section(t *testing.T, r *model.Report, id string) model.Section {
	t.Helper()
	for _, s := range r.Sections {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no section %q in %s report", id, r.Type)
	return model.Section{}
}

func ids(r *model.Report) []string {
	var out []string
	for _, s := range r.Sections {
		out = append(out, s.ID)
	}
	return out
}

func build(t *testing.T, deps BuildDeps, typ, site string) *model.Report {
	t.Helper()
	r, err := NewBuilder(deps).Build(context.Background(), Request{Type: typ, Days: 3, Site: site, Now: seedNow})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var badSLA = SLAFigures{AgentUptimePct: 97.2, Agents: 3, DeviceAvailabilityPct: 99.5, Devices: 2, PacketDropPct: 0.05, HasPacketDrop: true,
	Targets: []TargetStatus{
		{Target: SLATarget{Name: "core uptime", Metric: MetricAgentUptime, Scope: "site", Site: "north", Threshold: 99.5}, Measured: 97.2},
		{Target: SLATarget{Name: "devices", Metric: MetricDeviceAvailability, Scope: "site", Threshold: 99}, Measured: 99.5, Met: true},
	}}

var lowHealth = health.NetworkHealth{Score: 70, ComputedAt: seedAt(27, 8, 0),
	Deductions: []health.Deduction{{Reason: "critical_alerts", Points: 30, Detail: "3 open critical alert events"}}}

// TestBuildTraffic: the traffic report of every site, from the seeded
// database, section by section, with the numbers computed by hand in
// build_seed_test.go.
func TestBuildTraffic(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		r := build(t, storeDeps(db, nil, nil), model.TypeTraffic, "")
		if r.Title != "Traffic report" || !r.From.Equal(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)) || !r.To.Equal(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)) || r.Timezone != "UTC" {
			t.Errorf("header: %q %v %v %q", r.Title, r.From, r.To, r.Timezone)
		}
		if d := cmp.Diff([]string{"summary", "daily-traffic", "destinations", "processes", "dns", "protocols", "alerts", "ai"}, ids(r)); d != "" {
			t.Errorf("sections (-want +got):\n%s", d)
		}
		want := map[string]model.Section{
			"summary": {ID: "summary", Title: "Executive summary", Blocks: []model.Block{
				{Paragraph: "Total traffic was 5.63 GB (4.42 GB received, 1.21 GB sent), +462.6 % on the previous 3 days (1.00 GB)."},
				{Paragraph: "The busiest day was 2026-11-25 (Wednesday) with 4.00 GB."},
				{Paragraph: "The top destination country was CH with 20.0 kB, and the top network AS19281 Quad9 with 20.0 kB."},
				{Paragraph: "4 alerts were raised; the most frequent kind was port_scan (3)."},
				{Figures: []model.Figure{{Label: "Total traffic", Value: "5.63 GB", Note: "+462.6 % on the previous period"},
					{Label: "Busiest day", Value: "2026-11-25", Note: "4.00 GB"}, {Label: "Alerts", Value: "4"}}},
			}},
			"daily-traffic": {ID: "daily-traffic", Title: "Daily traffic", Blocks: []model.Block{
				{Chart: &model.Chart{Kind: model.ChartBars, Title: "Traffic per day", Unit: "bytes", Labels: []string{"2026-11-24", "2026-11-25", "2026-11-26"},
					Series: []model.Series{{Name: "Received", Values: []float64{1.12e9, 3e9, 3e8}}, {Name: "Sent", Values: []float64{2.06e8, 1e9, 0}}}}},
				{Table: &model.Table{Columns: []model.Column{{Title: "Day"}, {Title: "Received", Right: true}, {Title: "Sent", Right: true}, {Title: "Total", Right: true}},
					Rows: [][]string{{"2026-11-24", "1.12 GB", "206 MB", "1.33 GB"}, {"2026-11-25", "3.00 GB", "1.00 GB", "4.00 GB"},
						{"2026-11-26", "300 MB", "0 B", "300 MB"}, {"Total", "4.42 GB", "1.21 GB", "5.63 GB"}}}},
			}},
			"destinations": {ID: "destinations", Title: "Top destinations", Blocks: []model.Block{
				{Table: &model.Table{Caption: "By country", Columns: []model.Column{{Title: "Country"}, {Title: "Bytes", Right: true}},
					Rows: [][]string{{"CH", "20.0 kB"}, {"AU", "9.00 kB"}, {"US", "8.00 kB"}, {"unknown", "4.65 kB"}}}},
				{Table: &model.Table{Caption: "By network (ASN)", Columns: []model.Column{{Title: "Network"}, {Title: "Bytes", Right: true}},
					Rows: [][]string{{"AS19281 Quad9", "20.0 kB"}, {"AS13335 Cloudflare", "9.00 kB"}, {"AS15169 Google", "8.00 kB"}, {"unknown", "4.65 kB"}}}},
			}},
			"processes": {ID: "processes", Title: "Processes", Blocks: []model.Block{{Table: &model.Table{
				Caption: "Top processes by bytes, from the agents' deep collection",
				Columns: []model.Column{{Title: "Process"}, {Title: "Received", Right: true}, {Title: "Sent", Right: true}, {Title: "Total", Right: true}, {Title: "Agents", Right: true}},
				Rows: [][]string{{"backup", "10 B", "5.00 MB", "5.00 MB", "1"}, {"nginx", "1.00 MB", "2.00 MB", "3.00 MB", "1"},
					{"p12", "12.0 kB", "120 B", "12.1 kB", "1"}, {"p11", "11.0 kB", "110 B", "11.1 kB", "1"}, {"p10", "10.0 kB", "100 B", "10.1 kB", "1"},
					{"p09", "9.00 kB", "90 B", "9.09 kB", "1"}, {"p08", "8.00 kB", "80 B", "8.08 kB", "1"}, {"p07", "7.00 kB", "70 B", "7.07 kB", "1"},
					{"p06", "6.00 kB", "60 B", "6.06 kB", "1"}, {"p05", "5.00 kB", "50 B", "5.05 kB", "1"}},
				More: 4}}}},
			"dns": {ID: "dns", Title: "DNS", Blocks: []model.Block{{Table: &model.Table{Caption: "Top queried names",
				Columns: []model.Column{{Title: "Name"}, {Title: "Queries", Right: true}, {Title: "Responses", Right: true}, {Title: "Agents", Right: true}},
				Rows:    [][]string{{"south.test", "100", "99", "1"}, {"b.test", "7", "7", "1"}, {"example.com", "5", "4", "1"}}}}}},
			"protocols": {ID: "protocols", Title: "Protocols", Blocks: []model.Block{{Table: &model.Table{Caption: "Flows by IP protocol",
				Columns: []model.Column{{Title: "Protocol"}, {Title: "Bytes", Right: true}, {Title: "Packets", Right: true}, {Title: "Flows", Right: true}},
				Rows:    [][]string{{"TCP", "33.0 kB", "330", "4"}, {"UDP", "9.65 kB", "83", "31"}}}}}},
			"alerts": {ID: "alerts", Title: "Alerts", Blocks: []model.Block{
				{Figures: []model.Figure{{Label: "Alert events", Value: "4"}, {Label: "Critical (severity 8+)", Value: "3"}}},
				{Table: &model.Table{Caption: "By kind", Columns: []model.Column{{Title: "Kind"}, {Title: "Events", Right: true}, {Title: "Occurrences", Right: true}},
					Rows: [][]string{{"port_scan", "3", "6"}, {"new_device", "1", "2"}}}},
				{Table: &model.Table{Caption: "By severity (0-10)", Columns: []model.Column{{Title: "Severity"}, {Title: "Events", Right: true}},
					Rows: [][]string{{"8", "3"}, {"3", "1"}}}},
				{Table: &model.Table{Caption: "Top keys", Columns: []model.Column{{Title: "Kind"}, {Title: "Key"}, {Title: "Events", Right: true}, {Title: "Occurrences", Right: true}, {Title: "Highest severity", Right: true}},
					Rows: [][]string{{"port_scan", "10.9.9.9", "3", "6", "8"}, {"new_device", "aa:bb", "1", "2", "3"}}}},
			}},
			"ai": {ID: "ai", Title: "AI analyses", Empty: "No AI analyses in this period (the AI assistant is not configured)."},
		}
		for id, w := range want {
			if d := cmp.Diff(w, section(t, r, id)); d != "" {
				t.Errorf("section %s (-want +got):\n%s", id, d)
			}
		}
	})
}

// TestBuildEnterprise: the enterprise sections and the recommendations,
// each citing its figure, for every site and for north (the other
// site's rows absent); south is within every threshold and gets none.
func TestBuildEnterprise(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		sla := &fakeSLA{f: badSLA}
		r := build(t, storeDeps(db, sla, fakeHealth{lowHealth}), model.TypeEnterprise, "")
		if d := cmp.Diff([]string{"summary", "recommendations", "daily-traffic", "capacity", "banding", "sla", "health", "destinations",
			"conversations", "processes", "dns", "applications", "protocols", "alerts", "incidents", "ai"}, ids(r)); d != "" {
			t.Errorf("sections (-want +got):\n%s", d)
		}
		if !sla.from.Equal(r.From) || !sla.to.Equal(r.To) || sla.site != "" {
			t.Errorf("SLA asked for %q %v-%v, want the report's range", sla.site, sla.from, sla.to)
		}
		want := map[string]model.Section{
			"recommendations": {ID: "recommendations", Title: "Recommendations", Blocks: []model.Block{{List: []string{
				"Agent uptime 97.2 % is below 99.0 %: check agents edge-03 (0.0 %), web-02 (0.0 %), db-01 (0.0 %).",
				`SLA target "core uptime" (agent_uptime, site north) measured 97.2 % against 99.5 %: breached.`,
				"Traffic grew +462.6 % on the previous period (1.00 GB to 5.63 GB), above +20.0 %: plan capacity.",
				"2 critical alerts (severity 8+) of this period are unacknowledged: review and acknowledge them.",
				"1 critical incident is still open (severity 8+): assign an owner to each.",
				"Network health score 70 is below 80: see its deductions.",
			}}}},
			"capacity": {ID: "capacity", Title: "Capacity", Blocks: []model.Block{{Figures: []model.Figure{
				{Label: "Total traffic", Value: "5.63 GB"}, {Label: "Growth", Value: "+462.6 %", Note: "previous period 1.00 GB"},
				{Label: "Peak day", Value: "2026-11-25", Note: "4.00 GB"}, {Label: "Daily average", Value: "1.88 GB"}}}}},
			"banding": {ID: "banding", Title: "Throughput banding", Blocks: []model.Block{{Table: &model.Table{
				Caption: "Per-minute throughput (received + sent) over the 4 minutes with traffic",
				Columns: []model.Column{{Title: "Percentile"}, {Title: "Throughput", Right: true}},
				Rows:    [][]string{{"p50", "40.0 Mbit/s"}, {"p95", "533 Mbit/s"}, {"p99", "533 Mbit/s"}, {"Maximum", "533 Mbit/s"}}}}}},
			"sla": {ID: "sla", Title: "Service levels (SLA)", Blocks: []model.Block{
				{Figures: []model.Figure{{Label: "Agent uptime", Value: "97.2 %", Note: "3 agents"}, {Label: "Device availability", Value: "99.5 %", Note: "2 devices"},
					{Label: "Packet drop", Value: "0.1 %"}}},
				{Table: &model.Table{Caption: "SLA targets", Columns: []model.Column{{Title: "Target"}, {Title: "Metric"}, {Title: "Scope"}, {Title: "Threshold", Right: true}, {Title: "Measured", Right: true}, {Title: "Status"}},
					Rows: [][]string{{"core uptime", "agent_uptime", "site north", "99.5 %", "97.2 %", "breached"}, {"devices", "device_availability", "all sites", "99.0 %", "99.5 %", "met"}}}},
			}},
			"health": {ID: "health", Title: "Network health score", Blocks: []model.Block{
				{Figures: []model.Figure{{Label: "Health score", Value: "70 / 100", Note: "at 2026-11-27 08:00"}}},
				{Table: &model.Table{Caption: "Deductions", Columns: []model.Column{{Title: "Reason"}, {Title: "Points", Right: true}, {Title: "Detail"}},
					Rows: [][]string{{"critical_alerts", "30", "3 open critical alert events"}}}},
			}},
			"applications": {ID: "applications", Title: "DNS and application visibility", Blocks: []model.Block{{Table: &model.Table{
				Caption: "TLS server names (SNI) and HTTP hosts by bytes",
				Columns: []model.Column{{Title: "Host"}, {Title: "Seen as"}, {Title: "Bytes", Right: true}, {Title: "Connections", Right: true}, {Title: "Agents", Right: true}},
				Rows:    [][]string{{"shop.test", "HTTP Host", "7.00 kB", "2", "1"}, {"api.example.com", "TLS SNI", "500 B", "5", "1"}}}}}},
			"incidents": {ID: "incidents", Title: "Open incidents", Blocks: []model.Block{{Table: &model.Table{
				Caption: "Incidents open now that were opened before the end of the period, most severe first",
				Columns: []model.Column{{Title: "ID", Right: true}, {Title: "Title"}, {Title: "State"}, {Title: "Severity", Right: true}, {Title: "Risk", Right: true}, {Title: "Opened"}},
				Rows:    [][]string{{"1", "Port scan from 10.9.9.9", "open", "9", "50", "2026-11-24 01:00"}}}}}},
		}
		for id, w := range want {
			if d := cmp.Diff(w, section(t, r, id)); d != "" {
				t.Errorf("section %s (-want +got):\n%s", id, d)
			}
		}
		conv := section(t, r, "conversations").Blocks[0].Table
		if len(conv.Rows) != 25 || conv.More != 9 {
			t.Fatalf("conversations: %d rows, %d more; want 25 and 9", len(conv.Rows), conv.More)
		}
		for i, w := range map[int][]string{
			0:  {"10.1.1.1", "9.9.9.9", "20.0 kB", "200", "1"},
			1:  {"192.168.1.10", "1.1.1.1", "9.00 kB", "90", "1"},
			3:  {"192.168.1.11", "8.8.8.8", "3.00 kB", "30", "1"},
			24: {"10.2.0.10", "203.0.113.10", "100 B", "1", "1"},
		} {
			if d := cmp.Diff(w, conv.Rows[i]); d != "" {
				t.Errorf("conversation %d (-want +got):\n%s", i, d)
			}
		}
	})
}

// TestBuildSite: a site's report holds its rows only (north: db-01's
// traffic, the north exporter's flows, north's alerts and incidents),
// and a site within every threshold gets no recommendation.
func TestBuildSite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seed(t, db)
		r := build(t, storeDeps(db, &fakeSLA{f: badSLA}, nil), model.TypeEnterprise, "north")
		checks := []struct {
			id   string
			want func(model.Section) any
			is   any
		}{
			{"summary", func(s model.Section) any { return s.Blocks[0].Paragraph },
				"Total traffic was 126 MB (120 MB received, 6.00 MB sent), with no traffic recorded in the previous 3 days."},
			{"summary", func(s model.Section) any { return s.Blocks[3].Paragraph }, "3 alerts were raised; the most frequent kind was port_scan (3)."},
			{"daily-traffic", func(s model.Section) any { return s.Blocks[1].Table.Rows[3] }, []string{"Total", "120 MB", "6.00 MB", "126 MB"}},
			{"conversations", func(s model.Section) any { return s.Blocks[0].Table.Rows },
				[][]string{{"192.168.1.10", "1.1.1.1", "9.00 kB", "90", "1"}, {"192.168.1.10", "8.8.8.8", "5.00 kB", "50", "1"}, {"192.168.1.11", "8.8.8.8", "3.00 kB", "30", "1"}}},
			{"protocols", func(s model.Section) any { return s.Blocks[0].Table.Rows },
				[][]string{{"TCP", "13.0 kB", "130", "3"}, {"UDP", "5.00 kB", "50", "1"}}},
			{"processes", func(s model.Section) any {
				return []any{s.Blocks[0].Table.Rows[0][0], s.Blocks[0].Table.Rows[9][0], s.Blocks[0].Table.More}
			},
				[]any{"p12", "p03", 2}},
			{"dns", func(s model.Section) any { return len(s.Blocks[0].Table.Rows) }, 2},
			{"recommendations", func(s model.Section) any { return s.Blocks[0].List[0] },
				"Agent uptime 97.2 % is below 99.0 %: check agents edge-03 (0.0 %), db-01 (0.0 %)."},
			{"incidents", func(s model.Section) any { return len(s.Blocks[0].Table.Rows) }, 1},
		}
		for _, c := range checks {
			if d := cmp.Diff(c.is, c.want(section(t, r, c.id))); d != "" {
				t.Errorf("north %s (-want +got):\n%s", c.id, d)
			}
		}

		good := &fakeSLA{f: SLAFigures{AgentUptimePct: 99.9, Agents: 1, DeviceAvailabilityPct: 100, Devices: 1, PacketDropPct: 0.01, HasPacketDrop: true}}
		r = build(t, storeDeps(db, good, fakeHealth{health.NetworkHealth{Score: 95}}), model.TypeEnterprise, "south")
		if good.site != "south" {
			t.Errorf("SLA asked for site %q, want south", good.site)
		}
		if got := section(t, r, "recommendations").Empty; got != "Every figure of this report is within its threshold: no recommendation." {
			t.Errorf("south recommendations: %q", got)
		}
		if got := section(t, r, "incidents").Empty; got != "No incident is open." {
			t.Errorf("south incidents: %q", got)
		}
	})
}
