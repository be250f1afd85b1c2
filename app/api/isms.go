package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/compliance"
	"netmon/app/errs"
	"netmon/store"
)

// ISMSRegisters are the ISMS registers (*compliance.Registers): they
// validate and store with the audit record; these handlers translate.
type ISMSRegisters interface {
	List(ctx context.Context, kind string) ([]compliance.Entry, error)
	Create(ctx context.Context, who store.AuditActor, kind string, in compliance.EntryIn) (compliance.Entry, error)
	Update(ctx context.Context, who store.AuditActor, kind string, id int64, in compliance.EntryIn) (compliance.Entry, error)
}

// ISMSEntry is one register entry; exactly one of asset, risk, soa is set,
// the one of its kind.
type ISMSEntry struct {
	ID        int64                `json:"id"`
	Kind      string               `json:"kind" enum:"assets,risks,soa"`
	Ref       string               `json:"ref" doc:"the entry's key: an asset or risk id of your choosing, the Annex A control id of an SoA line"`
	UpdatedAt int64                `json:"updated_at"`
	UpdatedBy string               `json:"updated_by"`
	Asset     *compliance.Asset    `json:"asset,omitempty"`
	Risk      *compliance.Risk     `json:"risk,omitempty"`
	SoA       *compliance.SoAEntry `json:"soa,omitempty"`
}

// ISMSEntryIn is a created or replaced entry.
type ISMSEntryIn struct {
	Ref   string               `json:"ref" doc:"required on create; ignored on update"`
	Asset *compliance.Asset    `json:"asset,omitempty"`
	Risk  *compliance.Risk     `json:"risk,omitempty"`
	SoA   *compliance.SoAEntry `json:"soa,omitempty"`
}

type ismsKindIn struct {
	Kind string `path:"kind" enum:"assets,risks,soa" doc:"register"`
}

type ismsCreateIn struct {
	Kind string      `path:"kind" enum:"assets,risks,soa" doc:"register"`
	Body ISMSEntryIn `body:"json"`
}

type ismsUpdateIn struct {
	Kind string      `path:"kind" enum:"assets,risks,soa" doc:"register"`
	ID   int64       `path:"id" min:"1" doc:"entry id"`
	Body ISMSEntryIn `body:"json"`
}

func (s *Server) ismsControls(*gin.Context, *router.NoInput) ([]string, error) {
	return compliance.AnnexAControls(), nil
}

func (s *Server) listISMS(c *gin.Context, in *ismsKindIn) ([]ISMSEntry, error) {
	out := []ISMSEntry{}
	if s.deps.ISMS == nil {
		return out, nil
	}
	es, err := s.deps.ISMS.List(c, in.Kind)
	for _, e := range es {
		out = append(out, ISMSEntry(e))
	}
	return out, err
}

// createISMS stores an entry with its audit record (isms.create).
func (s *Server) createISMS(c *gin.Context, in *ismsCreateIn) (ISMSEntry, error) {
	if s.deps.ISMS == nil {
		return ISMSEntry{}, errs.NotFoundf("ISMS records are not available")
	}
	e, err := s.deps.ISMS.Create(c, auditActor(c), in.Kind, compliance.EntryIn(in.Body))
	return ISMSEntry(e), err
}

// updateISMS replaces an entry's content (its ref stays) with its audit
// record (isms.update, before and after).
func (s *Server) updateISMS(c *gin.Context, in *ismsUpdateIn) (ISMSEntry, error) {
	if s.deps.ISMS == nil {
		return ISMSEntry{}, errs.NotFoundf("no such entry")
	}
	e, err := s.deps.ISMS.Update(c, auditActor(c), in.Kind, in.ID, compliance.EntryIn(in.Body))
	return ISMSEntry(e), err
}
