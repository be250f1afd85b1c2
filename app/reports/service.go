package reports

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/errs"
	"netmon/app/panics"
	"netmon/app/reports/model"
	"netmon/store"
)

// Store is what the service needs of the database (store.DB).
type Store interface {
	InTx(ctx context.Context, fn func(*store.Tx) error) error
	ListReportSchedules(ctx context.Context, site string) ([]store.ReportSchedule, error)
	GetReportSchedule(ctx context.Context, site string, id int64) (store.ReportSchedule, error)
	ClaimReportSlot(ctx context.Context, id, slot int64, status string) (bool, error)
	SetReportScheduleStatus(ctx context.Context, id int64, status string) error
	ListReportArchive(ctx context.Context, site string, limit int) ([]store.ReportArchive, error)
	GetReportArchive(ctx context.Context, site string, id int64) (store.ReportArchive, error)
	SetReportDelivery(ctx context.Context, id int64, delivery string) error
	PruneReportArchive(ctx context.Context, before int64, keep int) (int64, error)
	ReportArchiveSize(ctx context.Context) (count, bytes int64, err error)
}

// ModelBuilder builds a report's model from the stored data (*Builder).
type ModelBuilder interface {
	Build(ctx context.Context, req Request) (*model.Report, error)
}

// RenderFunc writes a report in one format (render.HTML, render.PDF).
type RenderFunc func(w io.Writer, r *model.Report) error

// Mailer mails a report through the alert e-mail channel's server
// (*notify.Notifier). Its errors are classified texts, shown as is.
type Mailer interface {
	SendReport(ctx context.Context, to []string, subject, body, filename, contentType string, data []byte) error
}

// Compliance appends a report's hashes to the compliance log
// (*compliance.Service, which does nothing when the log is off).
type Compliance interface {
	AppendReport(ctx context.Context, sha256, dataSHA256, filename string) error
}

// Auditor builds audit records (app/audit's Builder).
type Auditor interface {
	Event(ctx context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent
}

// The audit vocabulary of reports.
const (
	ActionGenerate       = "report.generate"
	ActionScheduleCreate = "report.schedule.create"
	ActionScheduleDelete = "report.schedule.delete"
	ActionScheduleRun    = "report.schedule.run"
	ActionArchiveDelete  = "report.archive.delete"
)

// SchedulerActor is the actor of the runs the runner starts.
func SchedulerActor() store.AuditActor {
	return store.AuditActor{Username: "scheduler", ActorType: "system"}
}

// Deps are the service's collaborators.
type Deps struct {
	DB      Store
	Builder ModelBuilder
	// HTML and PDF render a model; nil answers an error for that format.
	HTML, PDF RenderFunc
	// Mailer delivers scheduled reports; nil: every delivery fails with
	// "e-mail not configured".
	Mailer Mailer
	// Compliance gets every generated report's hashes; nil: off.
	Compliance Compliance
	// Auditor builds the audit records; nil builds plain ones.
	Auditor  Auditor
	Registry prometheus.Registerer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// IsLeader says whether this hub runs the schedules (the leader when
	// several hubs share a database); nil: always. The slot claim in the
	// database keeps a slot from running twice either way.
	IsLeader func() bool
}

// Service generates, schedules, mails and archives reports.
type Service struct {
	log   *slog.Logger
	cfg   Config
	deps  Deps
	m     *metrics
	guard *panics.Guard

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	lastPrune time.Time // owned by the runner
}

// New builds the service; it does no work until Start.
func New(log *slog.Logger, cfg Config, deps Deps) *Service {
	def := DefaultConfig()
	if cfg.Tick <= 0 {
		cfg.Tick = def.Tick
	}
	if cfg.Timezone == "" {
		cfg.Timezone = def.Timezone
	}
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = def.RunTimeout
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Auditor == nil {
		deps.Auditor = plainAuditor{now: deps.Now}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{log: log, cfg: cfg, deps: deps, m: newMetrics(deps.Registry), guard: panics.New(deps.Registry, log, "reports")}
}

// Start starts the runner: at once (the catch-up after downtime), then
// every Tick, it runs the due schedule slots and prunes the archive.
func (s *Service) Start() error {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.guard.Keep(ctx.Done(), func() { s.runner(ctx) })
	}()
	return nil
}

// Stop stops the runner, cancelling a run in progress (its slot stays
// claimed: a slot is never run twice, so it is not retried).
func (s *Service) Stop() error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	s.wg.Wait()
	s.cancel = nil
	return nil
}

// Generate validates req, builds and renders the report, archives it
// (with its audit record report.generate, in one transaction) and
// appends its hashes to the compliance log. Invalid input is an errs
// Invalid naming the parameter, and nothing is stored.
func (s *Service) Generate(ctx context.Context, who store.AuditActor, req Request) (*Output, ArchiveEntry, error) {
	req, err := s.normalize(req)
	if err != nil {
		return nil, ArchiveEntry{}, err
	}
	g, err := s.generate(ctx, who, req, 0, ActionGenerate)
	if err != nil {
		return nil, ArchiveEntry{}, err
	}
	return g.out, g.entry, nil
}

// generated is a report made: its output, its archive entry, and the
// zone its range is in (the model's, which the file name uses).
type generated struct {
	out   *Output
	entry ArchiveEntry
	loc   *time.Location
}

// generate is Generate on a normalised request; scheduleID (0: none)
// and action say what the archive row and the audit record name.
func (s *Service) generate(ctx context.Context, who store.AuditActor, req Request, scheduleID int64, action string) (generated, error) {
	if s.deps.Builder == nil {
		return generated{}, errs.Unavailablef(0, "reports are not available on this hub")
	}
	start := time.Now()
	rep, err := s.deps.Builder.Build(ctx, req)
	if err != nil {
		return generated{}, fmt.Errorf("build %s report: %w", req.Type, err)
	}
	render := s.deps.HTML
	if req.Format == FormatPDF {
		render = s.deps.PDF
	}
	if render == nil {
		return generated{}, fmt.Errorf("render %s report: no %s renderer", req.Type, req.Format)
	}
	var buf bytes.Buffer
	if err := render(&buf, rep); err != nil {
		return generated{}, fmt.Errorf("render %s report as %s: %w", req.Type, req.Format, err)
	}
	from, to := rep.From, rep.To
	if from.IsZero() || to.IsZero() {
		// A model without its range: the Days whole days up to Now.
		to = req.Now
		from = to.AddDate(0, 0, -req.Days)
	}
	sum := sha256.Sum256(buf.Bytes())
	out := &Output{
		Filename:    filename(req.Type, req.Site, req.Format, from, to),
		ContentType: contentType(req.Format),
		Body:        buf.Bytes(),
		SHA256:      hex.EncodeToString(sum[:]),
		DataSHA256:  rep.DataSHA256(),
	}
	row := store.ReportArchive{ScheduleID: scheduleID, Type: req.Type, Format: req.Format, Site: req.Site, Days: req.Days,
		From: from.Unix(), To: to.Unix(), Filename: out.Filename, ContentType: out.ContentType, SHA256: out.SHA256,
		DataSHA256: out.DataSHA256, GeneratedAt: s.deps.Now().Unix(), GeneratedBy: who.Username, Body: out.Body}
	err = s.deps.DB.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.InsertReportArchive(ctx, row)
		if err != nil {
			return err
		}
		row.ID = id
		target := fmt.Sprintf("reports/archive/%d", id)
		if scheduleID != 0 {
			target = fmt.Sprintf("reports/schedules/%d", scheduleID)
		}
		detail := fmt.Sprintf("archive %d: %s sha256 %s", id, out.Filename, out.SHA256)
		_, err = tx.AppendAudit(ctx, s.deps.Auditor.Event(ctx, who, action, target, "ok", detail, nil, nil))
		return err
	})
	if err != nil {
		return generated{}, fmt.Errorf("archive %s report: %w", req.Type, err)
	}
	row.Size = int64(len(out.Body))
	s.m.generated.WithLabelValues(req.Type, req.Format).Inc()
	s.m.duration.WithLabelValues(req.Format).Observe(time.Since(start).Seconds())
	if s.deps.Compliance != nil {
		// The report is archived whatever happens here; a lost hash is
		// logged (and counted by the compliance log as dropped).
		if err := s.deps.Compliance.AppendReport(ctx, out.SHA256, out.DataSHA256, out.Filename); err != nil {
			s.log.Warn("report hash not appended to the compliance log", "archive", row.ID, "err", err)
		}
	}
	return generated{out: out, entry: entryOf(row), loc: from.Location()}, nil
}

// plainAuditor builds audit records without app/audit (tests, tools).
type plainAuditor struct{ now func() time.Time }

func (a plainAuditor) Event(_ context.Context, who store.AuditActor, action, target, result, detail string, _, _ any) store.AuditEvent {
	return store.AuditEvent{TS: a.now().Unix(), Username: who.Username, Role: who.Role, ActorType: who.ActorType,
		Action: action, Target: target, Result: result, Detail: detail}
}
