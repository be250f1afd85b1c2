package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/gin-gonic/gin"

	"netmon/alerting"
	"netmon/app/api/router"
	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/store"
)

// The alert configuration (spec 2.5, GET/PUT /api/alerts) is kept in two
// settings rows: the document with its secrets emptied, and the secrets
// alone sealed by the vault (the row's key is the associated data, so the
// blob cannot be moved to another row). Both are written in the
// transaction of the audit record: no record, no change (case 17).
const (
	alertConfigKey  = "alerts.config"
	alertSecretsKey = "alerts.secrets"
)

// SettingsStore keeps small documents and commits changes with their
// audit record (*store.DB).
type SettingsStore interface {
	GetSetting(ctx context.Context, key string) (string, error)
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

// Sealer seals secrets kept in the database (*vault.Vault).
type Sealer interface {
	Seal(plaintext, associatedData []byte) ([]byte, error)
	Open(blob, associatedData []byte) ([]byte, error)
}

// AlertEngine applies a saved configuration at once (*alerting.Engine).
type AlertEngine interface {
	Apply(alerting.Settings)
}

// LoadAlertSettings reads the stored alert configuration, secrets
// unsealed; the defaults when none is stored. A stored document without
// a section (anomaly) gets that section's defaults.
func LoadAlertSettings(ctx context.Context, db SettingsStore, v Sealer) (alerting.Settings, error) {
	doc, err := db.GetSetting(ctx, alertConfigKey)
	if errors.Is(err, store.ErrNotFound) {
		return alerting.DefaultSettings(), nil
	}
	if err != nil {
		return alerting.Settings{}, fmt.Errorf("load alert configuration: %w", err)
	}
	s, err := alerting.ParseStored([]byte(doc))
	if err != nil {
		return alerting.Settings{}, fmt.Errorf("load alert configuration: %w", err)
	}
	raw, err := db.GetSetting(ctx, alertSecretsKey)
	if errors.Is(err, store.ErrNotFound) {
		return s, nil
	}
	if err != nil {
		return alerting.Settings{}, fmt.Errorf("load alert secrets: %w", err)
	}
	blob, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return alerting.Settings{}, fmt.Errorf("load alert secrets: %w", err)
	}
	pt, err := v.Open(blob, []byte(alertSecretsKey))
	if err != nil {
		return alerting.Settings{}, fmt.Errorf("load alert secrets: %w", err)
	}
	var vals []string
	if err := json.Unmarshal(pt, &vals); err != nil {
		return alerting.Settings{}, fmt.Errorf("load alert secrets: %w", err)
	}
	return s.WithSecrets(vals), nil
}

// alertConfigMu serialises PUT /api/alerts on this hub: each is a
// read-modify-write of the stored document.
var alertConfigMu sync.Mutex

// AlertSettingsPatch is the body of PUT /api/alerts: any subset of the
// configuration's sections and fields; what is absent stays as stored.
// It keeps the raw document (merged over the stored one) and is described
// as the configuration itself.
type AlertSettingsPatch struct {
	raw []byte
}

// UnmarshalJSON keeps the document for the merge.
func (p *AlertSettingsPatch) UnmarshalJSON(b []byte) error {
	p.raw = append([]byte(nil), b...)
	return nil
}

// JSONSchemaAlias describes the patch as the configuration.
func (AlertSettingsPatch) JSONSchemaAlias() any { return alerting.Settings{} }

type alertsPutIn struct {
	Body AlertSettingsPatch `body:"json"`
}

// errAlertsGlobal refuses the alert configuration to site-bound
// identities: it applies to every site, so a site's admin changing it
// would change the others' alerting.
var errAlertsGlobal = errs.Forbiddenf("the alert configuration covers every site: site-bound identities cannot read or change it")

func (s *Server) getAlerts(c *gin.Context, _ *router.NoInput) (alerting.Settings, error) {
	if callerOf(c).SiteBound() {
		return alerting.Settings{}, errAlertsGlobal
	}
	cur, err := LoadAlertSettings(c, s.deps.Settings, s.deps.Vault)
	if err != nil {
		return alerting.Settings{}, err
	}
	return cur.Masked(), nil
}

func (s *Server) putAlerts(c *gin.Context, in *alertsPutIn) (OKResult, error) {
	if callerOf(c).SiteBound() {
		return OKResult{}, errAlertsGlobal
	}
	alertConfigMu.Lock()
	defer alertConfigMu.Unlock()
	old, err := LoadAlertSettings(c, s.deps.Settings, s.deps.Vault)
	if err != nil {
		return OKResult{}, err
	}
	next, err := old.Update(in.Body.raw)
	if err != nil {
		return OKResult{}, err
	}
	if err := next.Validate(); err != nil {
		return OKResult{}, err
	}
	plain, secrets := next.SplitSecrets()
	doc, err := json.Marshal(plain)
	if err != nil {
		return OKResult{}, fmt.Errorf("save alert configuration: %w", err)
	}
	pt, err := json.Marshal(secrets)
	if err != nil {
		return OKResult{}, fmt.Errorf("save alert configuration: %w", err)
	}
	blob, err := s.deps.Vault.Seal(pt, []byte(alertSecretsKey))
	if err != nil {
		return OKResult{}, fmt.Errorf("save alert configuration: %w", err)
	}
	id := callerOf(c)
	ev := audit.Event(c, audit.Actor{Username: id.Username, Role: string(id.Role), ActorType: string(id.Actor)},
		audit.ActionAlertsUpdate, "alerts:config", audit.ResultOK, "", old.Masked(), next.Masked())
	err = s.deps.Settings.InTx(c, func(tx *store.Tx) error {
		if err := tx.PutSetting(c, alertConfigKey, string(doc)); err != nil {
			return err
		}
		if err := tx.PutSetting(c, alertSecretsKey, base64.StdEncoding.EncodeToString(blob)); err != nil {
			return err
		}
		_, err := tx.AppendAudit(c, ev)
		return err
	})
	if err != nil {
		// Fail closed (case 17): without its audit record the change
		// is not made, and the engine keeps the old configuration.
		return OKResult{}, fmt.Errorf("save alert configuration: %w", err)
	}
	if s.deps.Alerts != nil {
		s.deps.Alerts.Apply(next)
	}
	return OKResult{OK: true}, nil
}
