package hub

import (
	"context"
	"encoding/json"

	"netmon/alerting/notify"
	"netmon/app/api"
)

// buildNotify builds alert delivery (alerting/notify) before the engine,
// which hands it each new event; it stops after the engine. Channels are
// read from the alert configuration in force, the routing rules from
// their settings row; every connection goes through the outbound guard.
func (h *Hub) buildNotify() {
	h.notifier = notify.New(h.log.With("component", "notify"), h.cfg.Notify, notify.Deps{
		Store:    h.db,
		Settings: h.notifySettings,
		LoadRoutes: func(ctx context.Context) ([]notify.Route, error) {
			return api.LoadAlertRoutes(ctx, h.db)
		},
		Guard:    h.netGuard,
		EmailTLS: h.emailTLS,
	}, h.reg)
	h.parts.add("notify", h.notifier.Start, noCtx(h.notifier.Stop))
}

// notifySettings copies the engine's notifiers section into the
// notifier's type (the same JSON names; alerting/notify cannot import
// alerting, which imports it).
func (h *Hub) notifySettings() notify.Settings {
	var out notify.Settings
	if h.alerts == nil {
		return out
	}
	b, err := json.Marshal(h.alerts.Settings().Notifiers)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		h.log.Warn("notifier settings", "error", err)
	}
	return out
}
