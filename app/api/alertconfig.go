package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"netmon/alerting"
	"netmon/app/api/router"
	"netmon/app/errs"
	"netmon/store"
)

// AlertSettings is the alert configuration (*alerting.SettingsService):
// it masks, merges, validates, seals, stores with the audit record and
// applies; these handlers only translate.
type AlertSettings interface {
	Get(ctx context.Context) (alerting.Settings, error)
	Update(ctx context.Context, who store.AuditActor, patch []byte) error
}

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
	return s.deps.AlertSettings.Get(c)
}

func (s *Server) putAlerts(c *gin.Context, in *alertsPutIn) (OKResult, error) {
	if callerOf(c).SiteBound() {
		return OKResult{}, errAlertsGlobal
	}
	if err := s.deps.AlertSettings.Update(c, auditActor(c), in.Body.raw); err != nil {
		return OKResult{}, err
	}
	return OKResult{OK: true}, nil
}

// auditActor is the caller as an audit record names it.
func auditActor(c *gin.Context) store.AuditActor {
	id := callerOf(c)
	return store.AuditActor{Username: id.Username, Role: string(id.Role), ActorType: string(id.Actor)}
}
