package api

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/audit"
	"netmon/app/compliance"
	"netmon/app/errs"
	"netmon/store"
)

// Compliance is the compliance log (*compliance.Service).
type Compliance interface {
	Enabled() bool
	MaskDefault() bool
	Status(ctx context.Context) (compliance.Status, error)
	Evidence(ctx context.Context, w io.Writer, from, to time.Time, mask bool) error
	WriteArchive(ctx context.Context, w io.Writer, format string, from, to time.Time, mask bool) error
}

// ComplianceStore keeps the reviews (*store.DB).
type ComplianceStore interface {
	InTx(ctx context.Context, fn func(tx *store.Tx) error) error
	ListComplianceReviews(ctx context.Context, limit int) ([]store.ComplianceReview, error)
}

func (s *Server) complianceStatus(c *gin.Context, _ *router.NoInput) (compliance.Status, error) {
	if s.deps.Compliance == nil {
		return compliance.Status{}, nil
	}
	return s.deps.Compliance.Status(c)
}

type evidenceIn struct {
	From   string `query:"from" required:"true" doc:"first UTC day, YYYY-MM-DD"`
	To     string `query:"to" required:"true" doc:"last UTC day (inclusive), YYYY-MM-DD"`
	Mask   string `query:"mask" enum:"true,false" doc:"mask IP, MAC and user names with keyed pseudonyms; default -mask-pii"`
	Format string `query:"format" enum:"json,zip,tar.gz" default:"json" doc:"json streams the bundle; zip and tar.gz add the public key, the TSA chain and a README for the auditor"`
}

// complianceEvidence streams the bundle: records are read page by page
// and written as they come, so a year never sits in memory.
func (s *Server) complianceEvidence(c *gin.Context, in *evidenceIn) error {
	if s.deps.Compliance == nil || !s.deps.Compliance.Enabled() {
		return errs.NotFoundf("compliance logging is off (-compliance)")
	}
	from, err := time.Parse(time.DateOnly, in.From)
	if err != nil {
		return invalidField("from", "query parameter \"from\": want YYYY-MM-DD")
	}
	to, err := time.Parse(time.DateOnly, in.To)
	if err != nil {
		return invalidField("to", "query parameter \"to\": want YYYY-MM-DD")
	}
	if to.Before(from) {
		return invalidField("from", "query parameter \"from\" must not be after \"to\"")
	}
	if to.Sub(from) > 3*366*24*time.Hour {
		return invalidField("to", "at most three years per bundle")
	}
	mask := s.deps.Compliance.MaskDefault()
	if in.Mask != "" {
		mask = in.Mask == "true"
	}
	s.audited(c, audit.ActionComplianceEvidence, "compliance/evidence", audit.ResultOK, in.From+".."+in.To+" masked="+strconv.FormatBool(mask))
	name := "netmon-evidence-" + in.From + "_" + in.To
	h := c.Writer.Header()
	switch in.Format {
	case "zip", "tar.gz":
		ct := "application/zip"
		if in.Format == "tar.gz" {
			ct = "application/gzip"
		}
		h.Set("Content-Type", ct)
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name + "." + in.Format}))
		c.Status(http.StatusOK)
		s.afterStart(c, s.deps.Compliance.WriteArchive(c, c.Writer, in.Format, from, to, mask))
		return nil
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name + ".json"}))
	c.Status(http.StatusOK)
	s.afterStart(c, s.deps.Compliance.Evidence(c, c.Writer, from, to, mask))
	return nil
}

// afterStart logs an error met once the body has started: it can no
// longer become a status, and the truncated bundle fails verification.
func (s *Server) afterStart(c *gin.Context, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		s.log.ErrorContext(c, "evidence stream failed", "error", err)
	}
}

type reviewsIn struct {
	Limit int `query:"limit" min:"1" max:"1000" default:"50" doc:"newest reviews to return"`
}

func (s *Server) listReviews(c *gin.Context, in *reviewsIn) ([]ComplianceReview, error) {
	if s.deps.ComplianceStore == nil {
		return []ComplianceReview{}, nil
	}
	list, err := s.deps.ComplianceStore.ListComplianceReviews(c, in.Limit)
	return convertAll(list, reviewOf), err
}

// ReviewCreate is a review record (spec 2.12).
type ReviewCreate struct {
	Kind    string `json:"kind" enum:"log,access" required:"true"`
	Period  string `json:"period" required:"true" doc:"YYYY-MM"`
	Notes   string `json:"notes" doc:"at most 4000 characters"`
	Finding string `json:"finding" doc:"at most 4000 characters"`
}

type reviewCreateIn struct {
	Body ReviewCreate `body:"json"`
}

var rePeriod = regexp.MustCompile(`^\d{4}-(0[1-9]|1[0-2])$`)

// createReview stores a review and its audit record in one transaction
// (spec 6.5): no review without its record.
func (s *Server) createReview(c *gin.Context, in *reviewCreateIn) (ComplianceReview, error) {
	b := in.Body
	switch {
	case b.Kind != "log" && b.Kind != "access":
		return ComplianceReview{}, invalidField("kind", "kind must be log or access")
	case !rePeriod.MatchString(b.Period):
		return ComplianceReview{}, invalidField("period", "period must be YYYY-MM")
	case len(b.Notes) > 4000 || len(b.Finding) > 4000:
		return ComplianceReview{}, invalidField("notes", "notes and finding are at most 4000 characters")
	}
	if s.deps.ComplianceStore == nil {
		return ComplianceReview{}, errs.NotFoundf("compliance reviews are not available")
	}
	who := callerOf(c)
	r := store.ComplianceReview{TS: time.Now().Unix(), Author: who.Username, Kind: b.Kind, Period: b.Period, Notes: b.Notes, Finding: b.Finding}
	ev := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
		audit.ActionComplianceReview, "compliance_reviews", audit.ResultOK, b.Kind+" "+b.Period, nil, r)
	err := s.deps.ComplianceStore.InTx(c, func(tx *store.Tx) error {
		var err error
		if r.ID, err = tx.InsertComplianceReview(c, r); err != nil {
			return err
		}
		ev.Target = "compliance_reviews/" + strconv.FormatInt(r.ID, 10)
		_, err = tx.AppendAudit(c, ev)
		return err
	})
	if err != nil {
		return ComplianceReview{}, err
	}
	return reviewOf(r), nil
}
