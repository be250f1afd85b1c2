package api

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/audit"
	"netmon/app/compliance"
	"netmon/app/errs"
	"netmon/store"
)

// ISMSStore keeps the ISMS registers (*store.DB).
type ISMSStore interface {
	InTx(ctx context.Context, fn func(tx *store.Tx) error) error
	ListISMS(ctx context.Context, kind string) ([]store.ISMSRecord, error)
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
	rs, err := s.deps.ISMS.ListISMS(c, in.Kind)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		e, err := entryOf(r)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func entryOf(r store.ISMSRecord) (ISMSEntry, error) {
	e := ISMSEntry{ID: r.ID, Kind: r.Kind, Ref: r.Ref, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy}
	var dst any
	switch r.Kind {
	case compliance.ISMSAsset:
		e.Asset = &compliance.Asset{}
		dst = e.Asset
	case compliance.ISMSRisk:
		e.Risk = &compliance.Risk{}
		dst = e.Risk
	default:
		e.SoA = &compliance.SoAEntry{}
		dst = e.SoA
	}
	return e, json.Unmarshal([]byte(r.Data), dst)
}

// ismsData validates the body for kind and returns its JSON.
func ismsData(kind, ref string, b *ISMSEntryIn) (string, error) {
	var v any
	var err error
	switch kind {
	case compliance.ISMSAsset:
		if b.Asset == nil {
			return "", invalidField("asset", "an assets entry carries asset")
		}
		v, err = b.Asset, compliance.ValidateAsset(b.Asset)
	case compliance.ISMSRisk:
		if b.Risk == nil {
			return "", invalidField("risk", "a risks entry carries risk")
		}
		v, err = b.Risk, compliance.ValidateRisk(b.Risk)
	default:
		if b.SoA == nil {
			return "", invalidField("soa", "an soa entry carries soa")
		}
		v, err = b.SoA, compliance.ValidateSoA(ref, b.SoA)
	}
	var fe *compliance.FieldError
	if errors.As(err, &fe) {
		return "", invalidField(fe.Field, "%s: %s", fe.Field, fe.Msg)
	}
	raw, _ := json.Marshal(v)
	return string(raw), nil
}

// createISMS stores an entry with its audit record (isms.create).
func (s *Server) createISMS(c *gin.Context, in *ismsCreateIn) (ISMSEntry, error) {
	if in.Body.Ref == "" || len(in.Body.Ref) > 64 {
		return ISMSEntry{}, invalidField("ref", "ref: 1 to 64 characters")
	}
	data, err := ismsData(in.Kind, in.Body.Ref, &in.Body)
	if err != nil {
		return ISMSEntry{}, err
	}
	if s.deps.ISMS == nil {
		return ISMSEntry{}, errs.NotFoundf("ISMS records are not available")
	}
	who := callerOf(c)
	r := store.ISMSRecord{Kind: in.Kind, Ref: in.Body.Ref, Data: data, UpdatedAt: time.Now().Unix(), UpdatedBy: who.Username}
	ev := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
		audit.ActionISMSCreate, "isms/"+in.Kind, audit.ResultOK, in.Body.Ref, nil, json.RawMessage(data))
	err = s.deps.ISMS.InTx(c, func(tx *store.Tx) error {
		var err error
		if r.ID, err = tx.InsertISMS(c, r); err != nil {
			return err
		}
		ev.Target = "isms/" + in.Kind + "/" + strconv.FormatInt(r.ID, 10)
		_, err = tx.AppendAudit(c, ev)
		return err
	})
	if errors.Is(err, store.ErrISMSRefTaken) {
		return ISMSEntry{}, errs.Conflictf("%s %q exists already", in.Kind, in.Body.Ref)
	}
	if err != nil {
		return ISMSEntry{}, err
	}
	return entryOf(r)
}

// updateISMS replaces an entry's content (its ref stays) with its audit
// record (isms.update, before and after).
func (s *Server) updateISMS(c *gin.Context, in *ismsUpdateIn) (ISMSEntry, error) {
	if s.deps.ISMS == nil {
		return ISMSEntry{}, errs.NotFoundf("no such entry")
	}
	who := callerOf(c)
	var r store.ISMSRecord
	err := s.deps.ISMS.InTx(c, func(tx *store.Tx) error {
		rs, err := s.deps.ISMS.ListISMS(c, in.Kind)
		if err != nil {
			return err
		}
		ref := ""
		for _, x := range rs {
			if x.ID == in.ID {
				ref = x.Ref
			}
		}
		if ref == "" {
			return errs.NotFoundf("no such %s entry", in.Kind)
		}
		data, err := ismsData(in.Kind, ref, &in.Body)
		if err != nil {
			return err
		}
		r = store.ISMSRecord{ID: in.ID, Kind: in.Kind, Ref: ref, Data: data, UpdatedAt: time.Now().Unix(), UpdatedBy: who.Username}
		old, err := tx.UpdateISMS(c, r)
		if err != nil {
			return err
		}
		ev := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
			audit.ActionISMSUpdate, "isms/"+in.Kind+"/"+strconv.FormatInt(in.ID, 10), audit.ResultOK, ref, json.RawMessage(old.Data), json.RawMessage(data))
		_, err = tx.AppendAudit(c, ev)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return ISMSEntry{}, errs.NotFoundf("no such %s entry", in.Kind)
	}
	if err != nil {
		return ISMSEntry{}, err
	}
	return entryOf(r)
}
