package reports

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/alerting/notify"
	"netmon/app/netguard"
	"netmon/store"
	"netmon/store/storetest"
)

// received is one mail the SMTP peer saved.
type received struct {
	to          string
	subject     string
	attachments map[string][]byte
}

// readMails parses every complete message in maildir, oldest first.
func readMails(t *testing.T, maildir string) []received {
	t.Helper()
	emls, _ := filepath.Glob(filepath.Join(maildir, "*.eml"))
	sort.Strings(emls)
	var out []received
	for _, f := range emls {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mail.ReadMessage(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		r := received{to: m.Header.Get("To"), subject: m.Header.Get("Subject"), attachments: map[string][]byte{}}
		_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
		if err != nil {
			t.Fatal(err)
		}
		mr := multipart.NewReader(m.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if name := p.FileName(); name != "" {
				var body io.Reader = p
				if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
					body = base64.NewDecoder(base64.StdEncoding, p)
				}
				b, err := io.ReadAll(body)
				if err != nil {
					t.Fatal(err)
				}
				r.attachments[name] = b
			}
		}
		out = append(out, r)
	}
	return out
}

// realMailer is the alert notifier sending through the aiosmtpd peer
// with STARTTLS and AUTH, as the hub's e-mail channel does.
func realMailer(t *testing.T, db *store.DB, port int, trust *tls.Config) *notify.Notifier {
	t.Helper()
	cfg := notify.DefaultConfig()
	cfg.Timeout, cfg.Hostname = 10*time.Second, "hub1"
	settings := notify.Settings{EmailHost: "127.0.0.1", EmailPort: port, EmailFrom: "netmon@example.test",
		EmailUser: "testuser", EmailPass: "testpass"}
	if port == 0 {
		settings = notify.Settings{} // the e-mail channel not configured
	}
	deps := notify.Deps{Store: db, Settings: func() notify.Settings { return settings },
		Guard: netguard.New(netguard.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})}
	if trust != nil {
		deps.EmailTLS = trust
	}
	return notify.New(storetest.Logger(t), cfg, deps, nil)
}

// dailyAtNine is a schedule mailed to two addresses every day at 09:00
// in Paris, as a PDF.
func dailyAtNine() ScheduleInput {
	return ScheduleInput{Name: "morning", Type: "traffic", Days: 1, Format: "pdf", Site: "lyon",
		Recipients: []string{"noc@example.test", "boss@example.test"}, Spec: "daily:09:00", Timezone: "Europe/Paris"}
}

// TestScheduleMailsOncePerSlotAcrossRestart: a schedule due every day
// (one slot per step of the test clock) produces exactly one archived
// report and one e-mail with the PDF attached per slot, through a real
// SMTP server; ticking again within a slot, and a new Service on the
// same database (a hub restart), never run a slot twice.
func TestScheduleMailsOncePerSlotAcrossRestart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		port, maildir, trust := smtpd(t)
		paris, _ := time.LoadLocation("Europe/Paris")
		clk := newClock(at("2026-11-02 08:30", paris))
		n := realMailer(t, db, port, trust)
		mk := func() *Service {
			s, _ := newService(t, db, clk, func(_ *Config, d *Deps) { d.Mailer = n })
			return s
		}
		s := mk()
		sc, err := s.CreateSchedule(t.Context(), alice, dailyAtNine())
		if err != nil {
			t.Fatal(err)
		}
		if want := at("2026-11-02 09:00", paris).Unix(); sc.NextRun != want {
			t.Errorf("next run %d, want %d", sc.NextRun, want)
		}
		s.tick(t.Context()) // 08:30: nothing due
		for day := range 3 {
			slot := at("2026-11-02 09:00", paris).AddDate(0, 0, day)
			clk.Set(slot.Add(10 * time.Second))
			if day == 2 {
				s = mk() // restart: a new service on the same database
			}
			s.tick(t.Context())
			s.tick(t.Context())
			clk.Set(slot.Add(5 * time.Minute))
			mk().tick(t.Context()) // another restart within the slot
			if n := count(t, db, "report_archive", "schedule_id = $1", sc.ID); n != day+1 {
				t.Fatalf("day %d: %d archived reports, want %d", day, n, day+1)
			}
		}
		mails := readMails(t, maildir)
		if len(mails) != 3 {
			t.Fatalf("%d mails, want 3 (one per slot)", len(mails))
		}
		entries, _ := s.ListArchive(t.Context(), "lyon", 10)
		for i, m := range mails {
			e := entries[len(entries)-1-i] // the archive is newest first
			_, body, err := s.OpenArchive(t.Context(), "lyon", e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.attachments) != 1 || !bytes.Equal(m.attachments[e.Filename], body) {
				t.Errorf("mail %d: attachments %v, want %s with the archived bytes", i, keys(m.attachments), e.Filename)
			}
			if m.to != "<noc@example.test>, <boss@example.test>" {
				t.Errorf("mail %d: To %q", i, m.to)
			}
			if want := fmt.Sprintf("[netmon] traffic report, lyon, 2026-11-%02d to 2026-11-%02d", 1+i, 1+i); m.subject != want {
				t.Errorf("mail %d: Subject %q, want %q", i, m.subject, want)
			}
			if e.Delivery != "sent to 2" || e.ScheduleID != sc.ID || e.GeneratedBy != "scheduler" {
				t.Errorf("entry %d: delivery %q schedule %d by %q", i, e.Delivery, e.ScheduleID, e.GeneratedBy)
			}
		}
		if want := "netmon-traffic-lyon-20261101-20261101.pdf"; entries[len(entries)-1].Filename != want {
			t.Errorf("first report %q, want %q (the day before the slot)", entries[len(entries)-1].Filename, want)
		}
		l, _ := s.ListSchedules(t.Context(), "lyon")
		if l[0].LastSlot != at("2026-11-04 09:00", paris).Unix() || l[0].LastStatus != "sent to 2" {
			t.Errorf("schedule last slot %d status %q", l[0].LastSlot, l[0].LastStatus)
		}
	})
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// countingMailer counts the reports it was asked to send.
type countingMailer struct {
	mu    sync.Mutex
	sends int
}

func (m *countingMailer) SendReport(context.Context, []string, string, string, string, string, []byte) error {
	m.mu.Lock()
	m.sends++
	m.mu.Unlock()
	return nil
}

// TestTwoHubsOneSlot: two services on one database ticking at once on
// a due slot: exactly one run, one mail; the other counts a lost claim.
func TestTwoHubsOneSlot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		paris, _ := time.LoadLocation("Europe/Paris")
		clk := newClock(at("2026-11-02 08:30", paris))
		m := &countingMailer{}
		hubs := make([]*Service, 2)
		for i := range hubs {
			hubs[i], _ = newService(t, db, clk, func(_ *Config, d *Deps) { d.Mailer = m })
		}
		if _, err := hubs[0].CreateSchedule(t.Context(), alice, dailyAtNine()); err != nil {
			t.Fatal(err)
		}
		clk.Set(at("2026-11-02 09:00", paris))
		var wg sync.WaitGroup
		for _, h := range hubs {
			wg.Go(func() { h.tick(t.Context()) })
		}
		wg.Wait()
		if n := count(t, db, "report_archive", ""); n != 1 || m.sends != 1 {
			t.Errorf("%d reports, %d mails; want 1 and 1", n, m.sends)
		}
		lost := testutil.ToFloat64(hubs[0].m.runs.WithLabelValues(outcomeSkipped)) + testutil.ToFloat64(hubs[1].m.runs.WithLabelValues(outcomeSkipped))
		sent := testutil.ToFloat64(hubs[0].m.runs.WithLabelValues(outcomeSent)) + testutil.ToFloat64(hubs[1].m.runs.WithLabelValues(outcomeSent))
		// A hub that listed the schedule after the other's claim sees
		// nothing due, so lost is 0 or 1; sent is exactly 1.
		if sent != 1 || lost > 1 {
			t.Errorf("runs: sent %v, lost claims %v; want 1 and at most 1", sent, lost)
		}
	})
}

// TestCatchUpOneSlot: after five missed slots only the latest runs, once;
// the runner's first tick at Start is the catch-up.
func TestCatchUpOneSlot(t *testing.T) {
	db := storetest.OpenSQLite(t)
	paris, _ := time.LoadLocation("Europe/Paris")
	clk := newClock(at("2026-11-02 08:30", paris))
	m := &countingMailer{}
	s, _ := newService(t, db, clk, func(c *Config, d *Deps) { d.Mailer = m; c.Tick = time.Hour })
	if _, err := s.CreateSchedule(t.Context(), alice, dailyAtNine()); err != nil {
		t.Fatal(err)
	}
	clk.Set(at("2026-11-06 12:00", paris)) // slots of the 2nd to the 6th missed
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for count(t, db, "report_archive", "") == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s.tick(t.Context())
	if n := count(t, db, "report_archive", ""); n != 1 || m.sends != 1 {
		t.Fatalf("%d reports, %d mails after 5 missed slots; want 1 and 1", n, m.sends)
	}
	l, _ := s.ListSchedules(t.Context(), "")
	if want := at("2026-11-06 09:00", paris).Unix(); l[0].LastSlot != want {
		t.Errorf("last slot %d, want the latest missed one %d", l[0].LastSlot, want)
	}
	if want := at("2026-11-07 09:00", paris).Unix(); l[0].NextRun != want {
		t.Errorf("next run %d, want %d", l[0].NextRun, want)
	}
}

// TestDeliveryFailures: the e-mail channel not configured, no mailer at
// all, and a refused recipient: the report is archived, its delivery
// and the schedule's status say why in the classified words, never the
// server's (PEER-TEXT-MARKER).
func TestDeliveryFailures(t *testing.T) {
	db := storetest.OpenSQLite(t)
	port, _, trust := smtpd(t)
	paris, _ := time.LoadLocation("Europe/Paris")
	tests := []struct {
		desc       string
		mailer     Mailer
		recipients []string
		want       string
	}{
		{"channel not configured", realMailer(t, db, 0, nil), nil, "failed: " + notify.ErrEmailNotConfigured.Error()},
		{"no mailer", nil, nil, "failed: e-mail not configured"},
		{"recipient refused", realMailer(t, db, port, trust), []string{"refused@example.test"}, "failed: recipient refused"},
		{"no recipient", realMailer(t, db, port, trust), []string{}, "archived"},
	}
	for i, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			clk := newClock(at("2026-11-02 08:30", paris))
			s, _ := newService(t, db, clk, func(_ *Config, d *Deps) {
				if tt.mailer != nil {
					d.Mailer = tt.mailer
				}
			})
			in := dailyAtNine()
			if tt.recipients != nil {
				in.Recipients = tt.recipients
			}
			sc, err := s.CreateSchedule(t.Context(), alice, in)
			if err != nil {
				t.Fatal(err)
			}
			e, err := s.RunSchedule(t.Context(), alice, "", sc.ID)
			if err != nil {
				t.Fatal(err)
			}
			wantDelivery := tt.want
			if wantDelivery == "archived" {
				wantDelivery = ""
			}
			if e.Delivery != wantDelivery {
				t.Errorf("delivery %q, want %q", e.Delivery, wantDelivery)
			}
			got, _ := db.GetReportSchedule(t.Context(), "", sc.ID)
			if got.LastStatus != tt.want || strings.Contains(got.LastStatus, "PEER-TEXT-MARKER") {
				t.Errorf("schedule status %q, want %q", got.LastStatus, tt.want)
			}
			if n := count(t, db, "report_archive", ""); n != i+1 {
				t.Errorf("%d archived, want %d", n, i+1)
			}
		})
	}
}

// TestRunnerGates: not the leader, nothing runs; a disabled... (none
// yet); retention and the archive bound are applied by the runner.
func TestRunnerGates(t *testing.T) {
	db := storetest.OpenSQLite(t)
	paris, _ := time.LoadLocation("Europe/Paris")
	clk := newClock(at("2026-11-02 08:30", paris))
	leader := false
	s, _ := newService(t, db, clk, func(c *Config, d *Deps) {
		d.IsLeader = func() bool { return leader }
		c.RetentionDays, c.MaxArchived = 2, 2
	})
	if _, err := s.CreateSchedule(t.Context(), alice, dailyAtNine()); err != nil {
		t.Fatal(err)
	}
	clk.Set(at("2026-11-02 09:00", paris))
	s.tick(t.Context())
	if n := count(t, db, "report_archive", ""); n != 0 {
		t.Fatalf("%d reports run by a hub that is not the leader, want 0", n)
	}
	leader = true
	// Three reports generated over four days: the runner keeps those of
	// the last 2 days, at most 2.
	for _, d := range []string{"2026-10-29 10:00", "2026-11-01 10:00", "2026-11-01 11:00"} {
		clk.Set(at(d, paris))
		if _, _, err := s.Generate(t.Context(), alice, Request{}); err != nil {
			t.Fatal(err)
		}
	}
	clk.Set(at("2026-11-02 09:00", paris))
	s.lastPrune = time.Time{}
	s.tick(t.Context()) // runs the 09:00 slot, then prunes
	l, _ := s.ListArchive(t.Context(), "", 10)
	if len(l) != 2 || l[0].ScheduleID == 0 || l[1].GeneratedAt != at("2026-11-01 11:00", paris).Unix() {
		t.Errorf("archive after pruning: %+v, want the scheduled report and the 11:00 one", l)
	}
	if got := testutil.ToFloat64(s.m.archiveCount); got != 2 {
		t.Errorf("archive gauge %v, want 2", got)
	}
}

// staleStore answers ListReportSchedules with a snapshot taken earlier:
// a hub that listed the schedules before another hub claimed the slot.
type staleStore struct {
	*store.DB
	snapshot []store.ReportSchedule
}

func (s staleStore) ListReportSchedules(context.Context, string) ([]store.ReportSchedule, error) {
	return s.snapshot, nil
}

// TestStaleHubLosesClaim: a hub whose view of the schedule is from
// before another hub ran the slot still does not run it: the claim in
// the database refuses (the in-memory check alone would not).
func TestStaleHubLosesClaim(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		paris, _ := time.LoadLocation("Europe/Paris")
		clk := newClock(at("2026-11-02 08:30", paris))
		m := &countingMailer{}
		a, _ := newService(t, db, clk, func(_ *Config, d *Deps) { d.Mailer = m })
		if _, err := a.CreateSchedule(t.Context(), alice, dailyAtNine()); err != nil {
			t.Fatal(err)
		}
		clk.Set(at("2026-11-02 09:00", paris))
		snap, _ := db.ListReportSchedules(t.Context(), "")
		b, _ := newService(t, db, clk, func(_ *Config, d *Deps) { d.Mailer = m; d.DB = staleStore{db, snap} })
		a.tick(t.Context())
		b.tick(t.Context())
		if n := count(t, db, "report_archive", ""); n != 1 || m.sends != 1 {
			t.Errorf("%d reports, %d mails; want 1 and 1", n, m.sends)
		}
		if lost := testutil.ToFloat64(b.m.runs.WithLabelValues(outcomeSkipped)); lost != 1 {
			t.Errorf("stale hub's lost claims %v, want 1", lost)
		}
	})
}
