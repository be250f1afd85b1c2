package alerting

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"netmon/app/errs"
	"netmon/store"
)

// The alert configuration (spec 2.5, GET/PUT /api/alerts) is kept in two
// settings rows: the document with its secrets emptied, and the secrets
// alone sealed by the vault (the row's key is the associated data, so the
// blob cannot be moved to another row). Both are written in the
// transaction of the audit record: no record, no change (case 17).
const (
	configKey  = "alerts.config"
	secretsKey = "alerts.secrets"
)

// SettingsDB keeps small documents and commits changes with their audit
// record (*store.DB).
type SettingsDB interface {
	GetSetting(ctx context.Context, key string) (string, error)
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

// Sealer seals secrets kept in the database (*vault.Vault).
type Sealer interface {
	Seal(plaintext, associatedData []byte) ([]byte, error)
	Open(blob, associatedData []byte) ([]byte, error)
}

// SettingsRows reads and writes the alert configuration's rows. It is
// apart from SettingsService so the engine can load its configuration at
// Start (Deps.Settings) without depending on the service that applies to
// it.
type SettingsRows struct {
	db    SettingsDB
	vault Sealer
}

// NewSettingsRows returns the rows over db, secrets sealed with v.
func NewSettingsRows(db SettingsDB, v Sealer) *SettingsRows {
	return &SettingsRows{db: db, vault: v}
}

// storedRows is what a load read: the settings and the two rows as they
// were (nil: absent), the "old" values of the compare-and-swap.
type storedRows struct {
	settings     Settings
	doc, secrets *string
}

// Load reads the stored alert configuration, secrets unsealed; the
// defaults when none is stored. A stored document without a section
// (anomaly) gets that section's defaults.
func (r *SettingsRows) Load(ctx context.Context) (Settings, error) {
	st, err := r.load(ctx)
	return st.settings, err
}

func (r *SettingsRows) load(ctx context.Context) (storedRows, error) {
	var st storedRows
	doc, err := r.db.GetSetting(ctx, configKey)
	if errors.Is(err, store.ErrNotFound) {
		st.settings = DefaultSettings()
	} else if err != nil {
		return storedRows{}, fmt.Errorf("load alert configuration: %w", err)
	} else {
		st.doc = &doc
		if st.settings, err = ParseStored([]byte(doc)); err != nil {
			return storedRows{}, fmt.Errorf("load alert configuration: %w", err)
		}
	}
	raw, err := r.db.GetSetting(ctx, secretsKey)
	if errors.Is(err, store.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return storedRows{}, fmt.Errorf("load alert secrets: %w", err)
	}
	st.secrets = &raw
	blob, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return storedRows{}, fmt.Errorf("load alert secrets: %w", err)
	}
	pt, err := r.vault.Open(blob, []byte(secretsKey))
	if err != nil {
		return storedRows{}, fmt.Errorf("load alert secrets: %w", err)
	}
	var vals []string
	if err := json.Unmarshal(pt, &vals); err != nil {
		return storedRows{}, fmt.Errorf("load alert secrets: %w", err)
	}
	st.settings = st.settings.WithSecrets(vals)
	return st, nil
}

// save writes next over prev with its audit record in one transaction;
// either row changed since prev was read is an error wrapping
// store.ErrConflict and nothing is written.
func (r *SettingsRows) save(ctx context.Context, prev storedRows, next Settings, ev store.AuditEvent) error {
	plain, secrets := next.SplitSecrets()
	doc, err := json.Marshal(plain)
	if err != nil {
		return fmt.Errorf("save alert configuration: %w", err)
	}
	pt, err := json.Marshal(secrets)
	if err != nil {
		return fmt.Errorf("save alert configuration: %w", err)
	}
	blob, err := r.vault.Seal(pt, []byte(secretsKey))
	if err != nil {
		return fmt.Errorf("save alert configuration: %w", err)
	}
	err = r.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SwapSetting(ctx, configKey, prev.doc, string(doc)); err != nil {
			return err
		}
		if err := tx.SwapSetting(ctx, secretsKey, prev.secrets, base64.StdEncoding.EncodeToString(blob)); err != nil {
			return err
		}
		_, err := tx.AppendAudit(ctx, ev)
		return err
	})
	if err != nil {
		return fmt.Errorf("save alert configuration: %w", err)
	}
	return nil
}

// Auditor builds audit records: app/audit's Builder, handed in by
// app/hub (services do not import each other). It stamps the time and
// the request carried by ctx and marshals before and after with every
// secret masked.
type Auditor interface {
	Event(ctx context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent
}

// Applier takes a saved configuration at once (*Engine).
type Applier interface {
	Apply(Settings)
}

// The audit vocabulary of the configuration (app/audit lists every
// action of the chain).
const (
	ActionAlertsUpdate = "alerts.update" // the alert configuration (secrets masked)
	resultOK           = "ok"
)

// saveAttempts bounds the retries of a save that lost a race with
// another hub's: each retry merges the caller's patch over the state
// that won, so the patch lands as if the saves had been queued.
const saveAttempts = 10

// SettingsService is the alert configuration as operators read and
// change it (GET/PUT /api/alerts): masked on read; on change merged,
// validated, sealed and stored with its audit record, then applied.
type SettingsService struct {
	rows    *SettingsRows
	auditor Auditor
	engine  Applier
}

// NewSettingsService returns the service over rows; engine (nil: none)
// gets every saved configuration.
func NewSettingsService(rows *SettingsRows, a Auditor, engine Applier) *SettingsService {
	return &SettingsService{rows: rows, auditor: a, engine: engine}
}

// Get returns the stored configuration with its secrets masked.
func (s *SettingsService) Get(ctx context.Context) (Settings, error) {
	cur, err := s.rows.Load(ctx)
	if err != nil {
		return Settings{}, err
	}
	return cur.Masked(), nil
}

// Update merges patch (any subset of the document; secrets as Update
// reads them) over the stored configuration, validates, stores it with
// the audit record of who, and applies it. Several hubs on one database
// change it by compare-and-swap: a save that finds the rows changed since
// it read them merges the patch again over the new state (a patch names
// only the fields the operator set, so the other hub's change is kept);
// after saveAttempts lost races it is a conflict (HTTP 409).
func (s *SettingsService) Update(ctx context.Context, who store.AuditActor, patch []byte) error {
	for attempt := range saveAttempts {
		old, err := s.rows.load(ctx)
		if err != nil {
			return err
		}
		next, err := old.settings.Update(patch)
		if err != nil {
			return err
		}
		if err := next.Validate(); err != nil {
			return err
		}
		ev := s.auditor.Event(ctx, who, ActionAlertsUpdate, "alerts:config", resultOK, "", old.settings.Masked(), next.Masked())
		err = s.rows.save(ctx, old, next, ev)
		if errors.Is(err, store.ErrConflict) {
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			// Fail closed (case 17): without its audit record the
			// change is not made, and the engine keeps the old
			// configuration.
			return err
		}
		if s.engine != nil {
			s.engine.Apply(next)
		}
		return nil
	}
	return errs.Conflictf("the alert configuration kept changing during the save (another hub): try again")
}

// backoff waits a random pause growing with attempt (up to about 50 ms)
// before a lost save is tried again, so that hubs racing on the row do
// not keep colliding in step.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 6)))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
