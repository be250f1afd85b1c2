package compliance

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"netmon/app/errs"
	"netmon/store"
)

// The ISMS registers (assets, risks, Statement of Applicability; GET,
// POST and PUT /api/v1/isms/{kind}) are this package's resource beside
// the log: validated here, stored with the audit record of each change;
// app/api only translates.

// RegisterStore keeps the registers (*store.DB).
type RegisterStore interface {
	InTx(ctx context.Context, fn func(tx *store.Tx) error) error
	ListISMS(ctx context.Context, kind string) ([]store.ISMSRecord, error)
}

// Auditor builds audit records: app/audit's Builder, handed in by
// app/hub (services do not import each other).
type Auditor interface {
	Event(ctx context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent
}

// The audit actions of the registers (app/audit lists every action).
const (
	ActionISMSCreate = "isms.create" // an ISMS register entry (asset, risk, SoA line)
	ActionISMSUpdate = "isms.update" // before/after of the entry
	resultOK         = "ok"
)

// Entry is one register entry; exactly one of Asset, Risk, SoA is set,
// the one of its kind.
type Entry struct {
	ID        int64
	Kind      string
	Ref       string
	UpdatedAt int64
	UpdatedBy string
	Asset     *Asset
	Risk      *Risk
	SoA       *SoAEntry
}

// EntryIn is a created or replaced entry (Ref is ignored on update).
type EntryIn struct {
	Ref   string
	Asset *Asset
	Risk  *Risk
	SoA   *SoAEntry
}

// Registers lists and changes the ISMS registers.
type Registers struct {
	db      RegisterStore
	auditor Auditor
	now     func() time.Time
}

// NewRegisters returns the registers over db.
func NewRegisters(db RegisterStore, a Auditor) *Registers {
	return &Registers{db: db, auditor: a, now: time.Now}
}

// List returns the entries of kind.
func (r *Registers) List(ctx context.Context, kind string) ([]Entry, error) {
	out := []Entry{}
	rs, err := r.db.ListISMS(ctx, kind)
	if err != nil {
		return nil, err
	}
	for _, x := range rs {
		e, err := entryOf(x)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func entryOf(r store.ISMSRecord) (Entry, error) {
	e := Entry{ID: r.ID, Kind: r.Kind, Ref: r.Ref, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy}
	var dst any
	switch r.Kind {
	case ISMSAsset:
		e.Asset = &Asset{}
		dst = e.Asset
	case ISMSRisk:
		e.Risk = &Risk{}
		dst = e.Risk
	default:
		e.SoA = &SoAEntry{}
		dst = e.SoA
	}
	return e, json.Unmarshal([]byte(r.Data), dst)
}

// invalid is a 400 naming field with msg as it is.
func invalid(field, format string, args ...any) error {
	e := errs.Invalidf(format, args...)
	e.Field = field
	return e
}

// entryData validates the entry for kind and returns its JSON.
func entryData(kind, ref string, b *EntryIn) (string, error) {
	var v any
	var err error
	switch kind {
	case ISMSAsset:
		if b.Asset == nil {
			return "", invalid("asset", "an assets entry carries asset")
		}
		v, err = b.Asset, ValidateAsset(b.Asset)
	case ISMSRisk:
		if b.Risk == nil {
			return "", invalid("risk", "a risks entry carries risk")
		}
		v, err = b.Risk, ValidateRisk(b.Risk)
	default:
		if b.SoA == nil {
			return "", invalid("soa", "an soa entry carries soa")
		}
		v, err = b.SoA, ValidateSoA(ref, b.SoA)
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return "", invalid(fe.Field, "%s: %s", fe.Field, fe.Msg)
	}
	raw, _ := json.Marshal(v)
	return string(raw), nil
}

// Create stores an entry of kind with its audit record (isms.create).
func (r *Registers) Create(ctx context.Context, who store.AuditActor, kind string, in EntryIn) (Entry, error) {
	if in.Ref == "" || len(in.Ref) > 64 {
		return Entry{}, invalid("ref", "ref: 1 to 64 characters")
	}
	data, err := entryData(kind, in.Ref, &in)
	if err != nil {
		return Entry{}, err
	}
	rec := store.ISMSRecord{Kind: kind, Ref: in.Ref, Data: data, UpdatedAt: r.now().Unix(), UpdatedBy: who.Username}
	ev := r.auditor.Event(ctx, who, ActionISMSCreate, "isms/"+kind, resultOK, in.Ref, nil, json.RawMessage(data))
	err = r.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if rec.ID, err = tx.InsertISMS(ctx, rec); err != nil {
			return err
		}
		ev.Target = "isms/" + kind + "/" + strconv.FormatInt(rec.ID, 10)
		_, err = tx.AppendAudit(ctx, ev)
		return err
	})
	if errors.Is(err, store.ErrISMSRefTaken) {
		return Entry{}, errs.Conflictf("%s %q exists already", kind, in.Ref)
	}
	if err != nil {
		return Entry{}, err
	}
	return entryOf(rec)
}

// Update replaces an entry's content (its ref stays) with its audit
// record (isms.update, before and after).
func (r *Registers) Update(ctx context.Context, who store.AuditActor, kind string, id int64, in EntryIn) (Entry, error) {
	var rec store.ISMSRecord
	err := r.db.InTx(ctx, func(tx *store.Tx) error {
		rs, err := r.db.ListISMS(ctx, kind)
		if err != nil {
			return err
		}
		ref := ""
		for _, x := range rs {
			if x.ID == id {
				ref = x.Ref
			}
		}
		if ref == "" {
			return errs.NotFoundf("no such %s entry", kind)
		}
		data, err := entryData(kind, ref, &in)
		if err != nil {
			return err
		}
		rec = store.ISMSRecord{ID: id, Kind: kind, Ref: ref, Data: data, UpdatedAt: r.now().Unix(), UpdatedBy: who.Username}
		old, err := tx.UpdateISMS(ctx, rec)
		if err != nil {
			return err
		}
		ev := r.auditor.Event(ctx, who, ActionISMSUpdate, "isms/"+kind+"/"+strconv.FormatInt(id, 10), resultOK, ref, json.RawMessage(old.Data), json.RawMessage(data))
		_, err = tx.AppendAudit(ctx, ev)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return Entry{}, errs.NotFoundf("no such %s entry", kind)
	}
	if err != nil {
		return Entry{}, err
	}
	return entryOf(rec)
}
