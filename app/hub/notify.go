package hub

import (
	"netmon/alerting/notify"
	"netmon/app/audit"
)

// buildNotify builds alert delivery (alerting/notify) before the engine,
// which hands it each new event and, on each configuration it applies,
// the channels; it stops after the engine. The routing rules are
// notify's own rows; every connection goes through the outbound guard.
func (h *Hub) buildNotify() {
	rows := notify.NewRouteRows(h.db)
	h.notifier = notify.New(h.log.With("component", "notify"), h.cfg.Notify, notify.Deps{
		Store:    h.db,
		Routes:   rows,
		Guard:    h.netGuard,
		EmailTLS: h.emailTLS,
	}, h.reg)
	h.alertRoutes = notify.NewRouteService(rows, audit.Builder{}, h.notifier)
	h.parts.add("notify", h.notifier.Start, noCtx(h.notifier.Stop))
}
