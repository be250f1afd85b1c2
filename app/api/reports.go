package api

import (
	"context"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/auth"
	"netmon/app/errs"
	"netmon/app/reports"
	"netmon/app/reports/model"
	"netmon/store"
)

// Reports generates, schedules and archives reports (*reports.Service):
// it validates, renders, archives and audits; these handlers translate.
type Reports interface {
	Generate(ctx context.Context, who store.AuditActor, req reports.Request) (*reports.Output, reports.ArchiveEntry, error)
	ListSchedules(ctx context.Context, site string) ([]reports.Schedule, error)
	CreateSchedule(ctx context.Context, who store.AuditActor, in reports.ScheduleInput) (reports.Schedule, error)
	DeleteSchedule(ctx context.Context, who store.AuditActor, site string, id int64) error
	RunSchedule(ctx context.Context, who store.AuditActor, site string, id int64) (reports.ArchiveEntry, error)
	ListArchive(ctx context.Context, site string, limit int) ([]reports.ArchiveEntry, error)
	OpenArchive(ctx context.Context, site string, id int64) (reports.ArchiveEntry, []byte, error)
	DeleteArchive(ctx context.Context, who store.AuditActor, site string, id int64) error
}

// SLATargets are the SLA targets (*reports.SLA): validated, measured and
// audited there.
type SLATargets interface {
	ListTargets(ctx context.Context, site string) ([]reports.TargetStatus, error)
	CreateTarget(ctx context.Context, who store.AuditActor, in reports.SLATargetInput) (reports.SLATarget, error)
	DeleteTarget(ctx context.Context, who store.AuditActor, site string, id int64) error
}

// Report headers: the hashes of what was sent, so a client can keep them
// beside the file (the archive and, with -compliance, the compliance log
// hold the same values).
const (
	headerReportSHA256     = "X-Netmon-Report-Sha256"
	headerReportDataSHA256 = "X-Netmon-Report-Data-Sha256"
	headerReportArchiveID  = "X-Netmon-Report-Archive-Id"
)

type reportIn struct {
	Type   string `query:"type" enum:"traffic,enterprise,compliance" default:"traffic" doc:"report type; compliance needs only the view permission"`
	Days   int    `query:"days" min:"1" max:"90" doc:"range in whole days ending now (default: traffic 7, enterprise 30, compliance 30)"`
	Format string `query:"format" enum:"html,pdf" default:"html" doc:"html: one self-contained page; pdf: an attachment"`
	Site   string `query:"site" doc:"narrow to one site (the enterprise site breakdown); a site-bound caller gets its own site whatever it asks, and 403 for another"`
}

// scopedSite is the site a caller reads: its own when site-bound (asking
// for another is refused), else what it asked for ("" = every site).
func scopedSite(c *gin.Context, asked string) (string, error) {
	id := callerOf(c)
	if id == nil || !id.SiteBound() {
		return asked, nil
	}
	if asked != "" && asked != id.Site {
		return "", errs.Forbiddenf("permission denied: a site-bound identity reads only its own site (%s)", id.Site)
	}
	return id.Site, nil
}

// ownSite is the site filter of the schedule, archive and SLA lists: a
// site-bound caller's site, "" (every site) otherwise.
func ownSite(c *gin.Context) string {
	if id := callerOf(c); id != nil && id.SiteBound() {
		return id.Site
	}
	return ""
}

func (s *Server) report(c *gin.Context, in *reportIn) error {
	if s.deps.Reports == nil {
		return errs.Unavailablef(0, "reports are not available on this hub")
	}
	site, err := scopedSite(c, in.Site)
	if err != nil {
		return err
	}
	out, entry, err := s.deps.Reports.Generate(c, auditActor(c), reports.Request{Type: in.Type, Days: in.Days, Format: in.Format, Site: site})
	if err != nil {
		return err
	}
	writeReport(c, out.Filename, out.ContentType, out.SHA256, out.DataSHA256, entry.ID, out.Body, in.Format == reports.FormatPDF)
	return nil
}

// reportCSP is the policy of a report's HTML: its own inline styles and
// data: images, nothing else (no script, no request anywhere), in a
// sandbox (a unique origin, so it reads no cookie), framed only by the
// console's own pages (the preview).
const reportCSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"

// writeReport sends a rendered report: PDFs (and archive downloads) as an
// attachment named for type, range and site, HTML inline so a browser
// shows it — sandboxed by reportCSP.
func writeReport(c *gin.Context, filename, contentType, sha, dataSHA string, archiveID int64, body []byte, attach bool) {
	h := c.Writer.Header()
	disposition := "inline"
	if attach {
		disposition = "attachment"
	}
	if strings.HasPrefix(contentType, "text/html") {
		h.Set("Content-Security-Policy", reportCSP)
		h.Set("X-Frame-Options", "SAMEORIGIN")
	}
	h.Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": filename}))
	h.Set(headerReportSHA256, sha)
	h.Set(headerReportDataSHA256, dataSHA)
	if archiveID > 0 {
		h.Set(headerReportArchiveID, strconv.FormatInt(archiveID, 10))
	}
	h.Set("Cache-Control", "no-store")
	c.Data(http.StatusOK, contentType, body)
}

func (s *Server) listReportSchedules(c *gin.Context, _ *router.NoInput) ([]reports.Schedule, error) {
	if s.deps.Reports == nil {
		return []reports.Schedule{}, nil
	}
	list, err := s.deps.Reports.ListSchedules(c, ownSite(c))
	if list == nil {
		list = []reports.Schedule{}
	}
	return list, err
}

type scheduleCreateIn struct {
	Body reports.ScheduleInput `body:"json"`
}

func (s *Server) createReportSchedule(c *gin.Context, in *scheduleCreateIn) (reports.Schedule, error) {
	if s.deps.Reports == nil {
		return reports.Schedule{}, errs.Unavailablef(0, "reports are not available on this hub")
	}
	site, err := scopedSite(c, in.Body.Site)
	if err != nil {
		return reports.Schedule{}, err
	}
	in.Body.Site = site
	return s.deps.Reports.CreateSchedule(c, auditActor(c), in.Body)
}

type reportIDIn struct {
	ID int64 `path:"id" min:"1" doc:"id"`
}

func (s *Server) deleteReportSchedule(c *gin.Context, in *reportIDIn) (OKResult, error) {
	if s.deps.Reports == nil {
		return OKResult{}, errs.NotFoundf("schedule not found")
	}
	if err := s.deps.Reports.DeleteSchedule(c, auditActor(c), ownSite(c), in.ID); err != nil {
		return OKResult{}, err
	}
	return OKResult{OK: true}, nil
}

func (s *Server) runReportSchedule(c *gin.Context, in *reportIDIn) (reports.ArchiveEntry, error) {
	if s.deps.Reports == nil {
		return reports.ArchiveEntry{}, errs.NotFoundf("schedule not found")
	}
	return s.deps.Reports.RunSchedule(c, auditActor(c), ownSite(c), in.ID)
}

type archiveListIn struct {
	Limit int `query:"limit" min:"1" max:"1000" default:"100" doc:"newest reports to return"`
}

// complianceOnly reports whether the caller reads only compliance
// reports: the view permission without analyze (spec 4.3: type=compliance
// needs view, the other types analyze), so a viewer can open the
// compliance report it generated, and no other.
func (s *Server) complianceOnly(c *gin.Context) bool {
	id := callerOf(c)
	return id == nil || !id.Can(auth.PermAnalyze, s.multiSite())
}

func (s *Server) listReportArchive(c *gin.Context, in *archiveListIn) ([]reports.ArchiveEntry, error) {
	out := []reports.ArchiveEntry{}
	if s.deps.Reports == nil {
		return out, nil
	}
	list, err := s.deps.Reports.ListArchive(c, ownSite(c), in.Limit)
	only := s.complianceOnly(c)
	for _, e := range list {
		if !only || e.Type == model.TypeCompliance {
			out = append(out, e)
		}
	}
	return out, err
}

type archiveDownloadIn struct {
	ID     int64 `path:"id" min:"1" doc:"id"`
	Inline bool  `query:"inline" doc:"true: an HTML report is shown in the browser (the console's preview frame) rather than saved"`
}

func (s *Server) downloadReport(c *gin.Context, in *archiveDownloadIn) error {
	if s.deps.Reports == nil {
		return errs.NotFoundf("report not found")
	}
	e, body, err := s.deps.Reports.OpenArchive(c, ownSite(c), in.ID)
	if err != nil {
		return err
	}
	if s.complianceOnly(c) && e.Type != model.TypeCompliance {
		return errs.NotFoundf("archived report %d not found", in.ID) // as a missing one
	}
	ct := "text/html; charset=utf-8"
	if e.Format == reports.FormatPDF {
		ct = "application/pdf"
	}
	writeReport(c, e.Filename, ct, e.SHA256, e.DataSHA256, e.ID, body, !(in.Inline && e.Format == reports.FormatHTML))
	return nil
}

func (s *Server) deleteArchivedReport(c *gin.Context, in *reportIDIn) (OKResult, error) {
	if s.deps.Reports == nil {
		return OKResult{}, errs.NotFoundf("report not found")
	}
	if err := s.deps.Reports.DeleteArchive(c, auditActor(c), ownSite(c), in.ID); err != nil {
		return OKResult{}, err
	}
	return OKResult{OK: true}, nil
}

func (s *Server) listSLATargets(c *gin.Context, _ *router.NoInput) ([]reports.TargetStatus, error) {
	if s.deps.SLA == nil {
		return []reports.TargetStatus{}, nil
	}
	list, err := s.deps.SLA.ListTargets(c, ownSite(c))
	if list == nil {
		list = []reports.TargetStatus{}
	}
	return list, err
}

type slaCreateIn struct {
	Body reports.SLATargetInput `body:"json"`
}

func (s *Server) createSLATarget(c *gin.Context, in *slaCreateIn) (reports.SLATarget, error) {
	if s.deps.SLA == nil {
		return reports.SLATarget{}, errs.Unavailablef(0, "SLA targets are not available on this hub")
	}
	site, err := scopedSite(c, in.Body.Site)
	if err != nil {
		return reports.SLATarget{}, err
	}
	in.Body.Site = site
	return s.deps.SLA.CreateTarget(c, auditActor(c), in.Body)
}

func (s *Server) deleteSLATarget(c *gin.Context, in *reportIDIn) (OKResult, error) {
	if s.deps.SLA == nil {
		return OKResult{}, errs.NotFoundf("SLA target not found")
	}
	if err := s.deps.SLA.DeleteTarget(c, auditActor(c), ownSite(c), in.ID); err != nil {
		return OKResult{}, err
	}
	return OKResult{OK: true}, nil
}
