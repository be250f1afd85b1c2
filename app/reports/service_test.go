package reports

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/app/errs"
	"netmon/store"
	"netmon/store/storetest"
)

var alice = store.AuditActor{Username: "alice", Role: "analyst", ActorType: "user"}

func goodInput() ScheduleInput {
	return ScheduleInput{Name: "Monday traffic", Type: "traffic", Days: 7, Format: "pdf", Site: "lyon",
		Recipients: []string{"noc@example.test"}, Spec: "weekly:mon:07:00", Timezone: "Europe/Paris"}
}

// TestValidation: each bad input is an errs Invalid naming its field,
// and nothing is stored (no archive row, no schedule, no audit record).
func TestValidation(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := newClock(at("2026-11-28 10:00", time.UTC))
	s, b := newService(t, db, clk, nil)
	reqs := []struct {
		desc  string
		req   Request
		field string
	}{
		{"days 91", Request{Days: 91}, "days"},
		{"days -1", Request{Days: -1}, "days"},
		{"enterprise days 91", Request{Type: "enterprise", Days: 91}, "days"},
		{"unknown type", Request{Type: "weekly"}, "type"},
		{"unknown format", Request{Format: "docx"}, "format"},
		{"site with a control character", Request{Site: "lyon\n"}, "site"},
		{"site too long", Request{Site: strings.Repeat("s", 129)}, "site"},
	}
	for _, tt := range reqs {
		_, _, err := s.Generate(t.Context(), alice, tt.req)
		if e, ok := errs.As(err); !ok || e.Kind != errs.Invalid || e.Field != tt.field {
			t.Errorf("Generate %s: error %v, want Invalid naming %q", tt.desc, err, tt.field)
		}
	}
	mod := func(f func(*ScheduleInput)) ScheduleInput { in := goodInput(); f(&in); return in }
	ins := []struct {
		desc  string
		in    ScheduleInput
		field string
	}{
		{"empty name", mod(func(in *ScheduleInput) { in.Name = "  " }), "name"},
		{"name too long", mod(func(in *ScheduleInput) { in.Name = strings.Repeat("n", 101) }), "name"},
		{"days 91", mod(func(in *ScheduleInput) { in.Days = 91 }), "days"},
		{"days -1", mod(func(in *ScheduleInput) { in.Days = -1 }), "days"},
		{"unknown type", mod(func(in *ScheduleInput) { in.Type = "sla" }), "type"},
		{"unknown format", mod(func(in *ScheduleInput) { in.Format = "csv" }), "format"},
		{"spec that does not parse", mod(func(in *ScheduleInput) { in.Spec = "every monday" }), "spec"},
		{"monthly day 29", mod(func(in *ScheduleInput) { in.Spec = "monthly:29:07:00" }), "spec"},
		{"unknown zone", mod(func(in *ScheduleInput) { in.Timezone = "Mars/Olympus" }), "timezone"},
		{"recipient not an address", mod(func(in *ScheduleInput) { in.Recipients = []string{"noc"} }), "recipients"},
		{"recipient with a name", mod(func(in *ScheduleInput) { in.Recipients = []string{"NOC <noc@example.test>"} }), "recipients"},
		{"two recipients in one", mod(func(in *ScheduleInput) { in.Recipients = []string{"a@example.test, b@example.test"} }), "recipients"},
		{"51 recipients", mod(func(in *ScheduleInput) { in.Recipients = make([]string, 51) }), "recipients"},
		{"site with a control character", mod(func(in *ScheduleInput) { in.Site = "a\x00" }), "site"},
	}
	for _, tt := range ins {
		_, err := s.CreateSchedule(t.Context(), alice, tt.in)
		if e, ok := errs.As(err); !ok || e.Kind != errs.Invalid || e.Field != tt.field {
			t.Errorf("CreateSchedule %s: error %v, want Invalid naming %q", tt.desc, err, tt.field)
		}
	}
	if n := count(t, db, "report_archive", ""); n != 0 {
		t.Errorf("%d archived reports after bad requests, want 0", n)
	}
	if n := count(t, db, "report_schedules", ""); n != 0 {
		t.Errorf("%d schedules after bad inputs, want 0", n)
	}
	if a := auditActions(t, db); len(a) != 0 {
		t.Errorf("audit records %v after bad inputs, want none", a)
	}
	if n := b.calls.Load(); n != 0 {
		t.Errorf("builder called %d times for bad requests, want 0", n)
	}
}

// TestGenerate: the output's name, type and hashes; the archive keeps
// the exact body with both hashes; one audit record; the compliance
// log gets the hashes.
func TestGenerate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := newClock(at("2026-11-28 10:00", time.UTC))
		comp := &fakeCompliance{}
		s, _ := newService(t, db, clk, func(_ *Config, d *Deps) { d.Compliance = comp })
		tests := []struct {
			req      Request
			filename string
			ctype    string
			days     int
		}{
			{Request{}, "netmon-traffic-all-20261121-20261127.html", "text/html; charset=utf-8", 7},
			{Request{Type: "enterprise", Format: "pdf", Site: "İstanbul Ofis #2"}, "netmon-enterprise-istanbul-ofis-2-20261029-20261127.pdf", "application/pdf", 30},
			{Request{Type: "compliance", Days: 1, Site: "şğı"}, "netmon-compliance-site-20261127-20261127.html", "text/html; charset=utf-8", 1},
		}
		for i, tt := range tests {
			out, e, err := s.Generate(t.Context(), alice, tt.req)
			if err != nil {
				t.Fatalf("Generate %+v: %v", tt.req, err)
			}
			sum := sha256.Sum256(out.Body)
			if out.Filename != tt.filename || out.ContentType != tt.ctype || out.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("output %q %q %s, want %q %q sha256 of the body", out.Filename, out.ContentType, out.SHA256, tt.filename, tt.ctype)
			}
			got, body, err := s.OpenArchive(t.Context(), "", e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, out.Body) {
				t.Errorf("archived body differs from the output")
			}
			want := ArchiveEntry{ID: e.ID, Type: e.Type, Format: e.Format, Site: tt.req.Site, Days: tt.days, From: e.From, To: e.To,
				Filename: tt.filename, Size: int64(len(out.Body)), SHA256: out.SHA256, DataSHA256: out.DataSHA256,
				GeneratedAt: clk.Now().Unix(), GeneratedBy: "alice"}
			if diff := cmp.Diff(got, want); diff != "" || got != e {
				t.Errorf("archive entry (-got, +want):\n%s", diff)
			}
			if len(comp.rows) != i+1 || comp.rows[i] != [3]string{out.SHA256, out.DataSHA256, out.Filename} {
				t.Errorf("compliance rows %v, want the report's hashes last", comp.rows)
			}
		}
		if diff := cmp.Diff(auditActions(t, db), []string{ActionGenerate, ActionGenerate, ActionGenerate}); diff != "" {
			t.Errorf("audit (-got, +want):\n%s", diff)
		}
		l, _ := s.ListArchive(t.Context(), "", 0)
		if len(l) != 3 || l[0].Type != "compliance" {
			t.Errorf("archive list %+v, want 3 newest first", l)
		}
	})
}

// TestSiteScoping: another site's schedule or report answers exactly
// what a missing id answers, and changes nothing.
func TestSiteScoping(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := newClock(at("2026-11-28 10:00", time.UTC))
		s, _ := newService(t, db, clk, nil)
		sc, err := s.CreateSchedule(t.Context(), alice, goodInput())
		if err != nil {
			t.Fatal(err)
		}
		_, e, err := s.Generate(t.Context(), alice, Request{Site: "lyon"})
		if err != nil {
			t.Fatal(err)
		}
		ops := []struct {
			desc string
			op   func(site string, id int64) error
			id   int64
		}{
			{"delete schedule", func(site string, id int64) error { return s.DeleteSchedule(t.Context(), alice, site, id) }, sc.ID},
			{"run schedule", func(site string, id int64) error { _, err := s.RunSchedule(t.Context(), alice, site, id); return err }, sc.ID},
			{"open report", func(site string, id int64) error { _, _, err := s.OpenArchive(t.Context(), site, id); return err }, e.ID},
			{"delete report", func(site string, id int64) error { return s.DeleteArchive(t.Context(), alice, site, id) }, e.ID},
		}
		for _, tt := range ops {
			other := tt.op("paris", tt.id)
			missing := tt.op("paris", tt.id+1000)
			if errs.KindOf(other) != errs.NotFound || other.Error() != strings.Replace(missing.Error(), "1001", "1", 1) {
				t.Errorf("%s: another site's id answers %v, a missing one %v; want the same NotFound", tt.desc, other, missing)
			}
		}
		if l, _ := s.ListSchedules(t.Context(), "paris"); len(l) != 0 {
			t.Errorf("paris lists %d schedules, want 0", len(l))
		}
		if l, _ := s.ListArchive(t.Context(), "paris", 10); len(l) != 0 {
			t.Errorf("paris lists %d reports, want 0", len(l))
		}
		if count(t, db, "report_schedules", "") != 1 || count(t, db, "report_archive", "") != 1 {
			t.Errorf("rows deleted from another site")
		}
		if diff := cmp.Diff(auditActions(t, db), []string{ActionScheduleCreate, ActionGenerate}); diff != "" {
			t.Errorf("audit (-got, +want):\n%s", diff)
		}
		// The owner's site (and a global caller) can.
		if err := s.DeleteArchive(t.Context(), alice, "lyon", e.ID); err != nil {
			t.Errorf("delete own report: %v", err)
		}
		if err := s.DeleteSchedule(t.Context(), alice, "", sc.ID); err != nil {
			t.Errorf("global delete: %v", err)
		}
	})
}

// TestAuditSameTransaction: each audited action writes exactly one
// record with its action; with the audit table refusing inserts the
// action fails and nothing changes.
func TestAuditSameTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := newClock(at("2026-11-28 10:00", time.UTC))
		s, _ := newService(t, db, clk, nil)
		sc, err := s.CreateSchedule(t.Context(), alice, goodInput())
		if err != nil {
			t.Fatal(err)
		}
		_, e, err := s.Generate(t.Context(), alice, Request{})
		if err != nil {
			t.Fatal(err)
		}
		run, err := s.RunSchedule(t.Context(), alice, "lyon", sc.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteArchive(t.Context(), alice, "", run.ID); err != nil {
			t.Fatal(err)
		}
		want := []string{ActionScheduleCreate, ActionGenerate, ActionScheduleRun, ActionArchiveDelete}
		if diff := cmp.Diff(auditActions(t, db), want); diff != "" {
			t.Errorf("audit (-got, +want):\n%s", diff)
		}

		breakAudit(t, db)
		if _, err := s.CreateSchedule(t.Context(), alice, goodInput()); err == nil {
			t.Error("CreateSchedule succeeded without its audit record")
		}
		if _, _, err := s.Generate(t.Context(), alice, Request{}); err == nil {
			t.Error("Generate succeeded without its audit record")
		}
		if _, err := s.RunSchedule(t.Context(), alice, "", sc.ID); err == nil {
			t.Error("RunSchedule succeeded without its audit record")
		}
		if err := s.DeleteArchive(t.Context(), alice, "", e.ID); err == nil {
			t.Error("DeleteArchive succeeded without its audit record")
		}
		if err := s.DeleteSchedule(t.Context(), alice, "", sc.ID); err == nil {
			t.Error("DeleteSchedule succeeded without its audit record")
		}
		if n := count(t, db, "report_schedules", ""); n != 1 {
			t.Errorf("%d schedules, want 1 (nothing added or deleted)", n)
		}
		if n := count(t, db, "report_archive", ""); n != 1 {
			t.Errorf("%d archived reports, want 1 (nothing added or deleted)", n)
		}
		if n := len(auditActions(t, db)); n != len(want) {
			t.Errorf("%d audit records, want %d", n, len(want))
		}
	})
}

// TestBuilderFailure: a failing builder is an error, nothing archived.
func TestBuilderFailure(t *testing.T) {
	db := storetest.OpenSQLite(t)
	s, b := newService(t, db, newClock(at("2026-11-28 10:00", time.UTC)), nil)
	b.fail.Store(true)
	if _, _, err := s.Generate(t.Context(), alice, Request{}); err == nil || errs.KindOf(err) == errs.Invalid {
		t.Errorf("Generate with a failing builder: %v, want an internal error", err)
	}
	if n := count(t, db, "report_archive", ""); n != 0 {
		t.Errorf("%d archived, want 0", n)
	}
}

// TestScheduleDefaults: a schedule given only a name and a spec is a
// 7-day traffic PDF of every site in the configured zone, archived only;
// its next run is the spec's next slot.
func TestScheduleDefaults(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := newClock(at("2026-11-28 10:00", time.UTC))
	s, _ := newService(t, db, clk, func(c *Config, _ *Deps) { c.Timezone = "Europe/Istanbul" })
	got, err := s.CreateSchedule(t.Context(), alice, ScheduleInput{Name: " weekly ", Spec: "weekly:mon:08:00"})
	if err != nil {
		t.Fatal(err)
	}
	ist, _ := time.LoadLocation("Europe/Istanbul")
	want := Schedule{ID: got.ID, Name: "weekly", Type: "traffic", Days: 7, Format: "pdf", Recipients: []string{},
		Spec: "weekly:mon:08:00", Timezone: "Europe/Istanbul", Enabled: true, NextRun: at("2026-11-30 08:00", ist).Unix(),
		CreatedAt: clk.Now().Unix(), CreatedBy: "alice"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("created (-got, +want):\n%s", diff)
	}
	l, _ := s.ListSchedules(t.Context(), "")
	if diff := cmp.Diff(l, []Schedule{want}); diff != "" {
		t.Errorf("listed (-got, +want):\n%s", diff)
	}
}
