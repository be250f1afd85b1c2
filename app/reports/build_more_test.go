package reports

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/app/compliance"
	"netmon/app/reports/model"
	"netmon/store"
	"netmon/store/storetest"
)

// TestBuildMissingSources: with no source at all every section prints
// its empty-data note and the build does not fail; with the sources on
// an empty database the notes say that nothing was recorded.
func TestBuildMissingSources(t *testing.T) {
	empty := storetest.OpenSQLite(t)
	cases := []struct {
		name string
		deps BuildDeps
		typ  string
		want map[string]string // section id → empty note
	}{
		{"no source, traffic", BuildDeps{}, model.TypeTraffic, map[string]string{
			"summary":       "No data was recorded in this period.",
			"daily-traffic": noTrafficSource, "destinations": noFlowSource, "processes": noDeepSource,
			"dns": noDeepSource, "protocols": noFlowSource, "alerts": noAlertSource, "ai": noAI,
		}},
		{"no source, enterprise", BuildDeps{}, model.TypeEnterprise, map[string]string{
			"recommendations": "Every figure of this report is within its threshold: no recommendation.",
			"capacity":        noTrafficSource, "banding": noTrafficSource, "sla": noSLA, "health": noHealth,
			"conversations": noFlowSource, "applications": noDeepSource, "incidents": noAlertSource,
		}},
		{"empty database", BuildDeps{Traffic: empty, Flows: empty, Deep: empty, Alerts: empty}, model.TypeEnterprise, map[string]string{
			"daily-traffic": "No traffic was recorded in this period.",
			"destinations":  "No flows were recorded in this period.",
			"processes":     "No agent reported process traffic in this period.",
			"dns":           "No agent reported DNS queries in this period.",
			"applications":  "No agent reported TLS or HTTP names in this period.",
			"alerts":        "No alerts were raised in this period.",
			"incidents":     "No incident is open.",
			"conversations": "No flows were recorded in this period.",
		}},
		{"flows without geo", BuildDeps{Flows: seededOnce(t)}, model.TypeTraffic, map[string]string{
			"destinations": "Destinations cannot be placed: no geo database (country and ASN) is configured.",
		}},
		{"compliance off", BuildDeps{Compliance: fakeLog{compliance.Status{}}}, model.TypeCompliance, map[string]string{
			"compliance-log": "The compliance log is off: no chain, checkpoint or seal to report.",
			"controls":       "The ISMS registers are not available: no statement of applicability to map.",
		}},
		{"compliance nil", BuildDeps{}, model.TypeCompliance, map[string]string{
			"compliance-log": "The compliance log is off: no chain, checkpoint or seal to report.",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewBuilder(c.deps).Build(context.Background(), Request{Type: c.typ, Days: 3, Now: seedNow})
			if err != nil {
				t.Fatal(err)
			}
			for id, note := range c.want {
				s := section(t, r, id)
				if s.Empty != note || len(s.Blocks) != 0 {
					t.Errorf("%s: empty %q with %d blocks, want %q", id, s.Empty, len(s.Blocks), note)
				}
			}
		})
	}
}

// seededOnce is a seeded SQLite database.
func seededOnce(t *testing.T) *store.DB {
	db := storetest.OpenSQLite(t)
	seed(t, db)
	return db
}

// TestBuildDBError: a database that fails is an error of the build, not
// an empty report.
func TestBuildDBError(t *testing.T) {
	db := storetest.OpenSQLite(t)
	mustExec(t, db, `DROP TABLE agent_dns_minutes`)
	_, err := NewBuilder(BuildDeps{Deep: db}).Build(context.Background(), Request{Type: model.TypeTraffic, Days: 3, Now: seedNow})
	if err == nil || !strings.Contains(err.Error(), "report dns") {
		t.Fatalf("Build over a broken database: %v, want the dns read's error", err)
	}
	boom := errors.New("boom")
	_, err = NewBuilder(BuildDeps{Compliance: errLog{boom}}).Build(context.Background(), Request{Type: model.TypeCompliance, Days: 3, Now: seedNow})
	if !errors.Is(err, boom) {
		t.Fatalf("Build with a failing compliance log: %v, want boom", err)
	}
}

type errLog struct{ err error }

func (e errLog) Status(context.Context) (compliance.Status, error) { return compliance.Status{}, e.err }

// TestBuildCompliance: the Annex A map lists the 93 controls in order
// with their SoA line, evidence and the risks they treat; the log's
// status names its chain, last checkpoint and last seal.
func TestBuildCompliance(t *testing.T) {
	isms := fakeISMS{
		compliance.ISMSSoA: {
			{Ref: "A.5.1", SoA: &compliance.SoAEntry{Applicable: true, Implemented: "yes", Justification: "policy set", Evidence: "doc ISP-1"}},
			{Ref: "A.8.16", SoA: &compliance.SoAEntry{Applicable: true, Implemented: "partial", Justification: "monitoring", Evidence: "netmon evidence bundle"}},
			{Ref: "A.7.4", SoA: &compliance.SoAEntry{Applicable: false, Implemented: "no", Justification: "no premises"}},
		},
		compliance.ISMSRisk: {
			{Ref: "R-2", Risk: &compliance.Risk{Controls: []string{"A.8.16"}}},
			{Ref: "R-1", Risk: &compliance.Risk{Controls: []string{"A.8.16", "A.5.1"}}},
		},
	}
	log := fakeLog{compliance.Status{Config: compliance.StatusConfig{Enabled: true, RetentionDays: 400, KeyID: "k1"},
		Records: 1234567, LastRecordTS: seedAt(26, 23, 0),
		LastHourly: &compliance.StatusHourly{Hour: "2026-11-27T07:00:00Z", Size: 40, Root: "00112233445566778899", SignedAt: seedAt(27, 8, 0)},
		LastDaily:  &compliance.StatusDaily{Day: "2026-11-26", Size: 39, Root: "abcdef0123456789abcd", SignedAt: seedAt(27, 0, 5), TSAStatus: "ok"}}}
	r, err := NewBuilder(BuildDeps{ISMS: isms, Compliance: log}).Build(context.Background(), Request{Type: model.TypeCompliance, Days: 30, Now: seedNow})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"summary", "controls", "compliance-log"}, ids(r)); d != "" {
		t.Errorf("sections (-want +got):\n%s", d)
	}
	sum := section(t, r, "summary")
	if d := cmp.Diff([]string{"The statement of applicability covers 3 of the 93 Annex A controls (3.2 %).",
		"2 controls are applicable: 1 implemented, 1 partially, 0 not yet."}, []string{sum.Blocks[0].Paragraph, sum.Blocks[1].Paragraph}); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	tb := section(t, r, "controls").Blocks[0].Table
	if len(tb.Rows) != 93 || tb.More != 0 {
		t.Fatalf("controls: %d rows, %d more; want the 93", len(tb.Rows), tb.More)
	}
	for i, w := range map[int][]string{
		0:  {"A.5.1", "Organizational", "yes", "yes", "policy set", "doc ISP-1", "R-1"},
		1:  {"A.5.2", "Organizational", "not assessed", "", "", "", ""},
		48: {"A.7.4", "Physical", "no", "no", "no premises", "", ""},
		74: {"A.8.16", "Technological", "yes", "partial", "monitoring", "netmon evidence bundle", "R-1, R-2"},
		92: {"A.8.34", "Technological", "not assessed", "", "", "", ""},
	} {
		if d := cmp.Diff(w, tb.Rows[i]); d != "" {
			t.Errorf("control row %d (-want +got):\n%s", i, d)
		}
	}
	want := model.Section{ID: "compliance-log", Title: "Compliance log", Blocks: []model.Block{
		{Figures: []model.Figure{{Label: "Records in the chain", Value: "1 234 567", Note: "retention 400 days"},
			{Label: "Last record", Value: "2026-11-26 23:00"}, {Label: "Signing key", Value: "k1"}}},
		{Table: &model.Table{Caption: "Checkpoints", Columns: []model.Column{{Title: "Kind"}, {Title: "Period"}, {Title: "Records", Right: true}, {Title: "Root"}, {Title: "Signed"}, {Title: "Time-stamp"}},
			Rows: [][]string{{"Last hourly checkpoint", "2026-11-27T07:00:00Z", "40", "0011223344556677…", "2026-11-27 08:00", "-"},
				{"Last daily seal", "2026-11-26", "39", "abcdef0123456789…", "2026-11-27 00:05", "time-stamped"}}}},
	}}
	if d := cmp.Diff(want, section(t, r, "compliance-log")); d != "" {
		t.Errorf("compliance log (-want +got):\n%s", d)
	}
}

// TestAISection: a configured AI source prints its latest three.
func TestAISection(t *testing.T) {
	ai := fakeAI{{At: time.Unix(seedAt(26, 10, 0), 0), Title: "Spike", Summary: "backup ran"}, {At: time.Unix(seedAt(25, 10, 0), 0), Title: "b"},
		{At: time.Unix(seedAt(24, 10, 0), 0), Title: "c"}, {At: time.Unix(seedAt(24, 9, 0), 0), Title: "d"}}
	r, err := NewBuilder(BuildDeps{AI: ai}).Build(context.Background(), Request{Days: 3, Now: seedNow})
	if err != nil {
		t.Fatal(err)
	}
	tb := section(t, r, "ai").Blocks[0].Table
	if len(tb.Rows) != 3 || tb.Rows[0][0] != "2026-11-26 10:00" || tb.Rows[0][2] != "backup ran" {
		t.Fatalf("ai rows: %q", tb.Rows)
	}
	r, _ = NewBuilder(BuildDeps{AI: fakeAI{}}).Build(context.Background(), Request{Days: 3, Now: seedNow})
	if got := section(t, r, "ai").Empty; got != "No AI analyses in this period." {
		t.Fatalf("ai empty: %q", got)
	}
}
