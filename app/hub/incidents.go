package hub

import (
	"time"

	"netmon/alerting/incident"
)

// buildIncidents builds the correlation engine over the stored alert
// events; it runs with the alert engine (-alerts) and reads the
// operator's correlate_window_sec from it.
func (h *Hub) buildIncidents() {
	cfg := incident.DefaultConfig()
	cfg.Enabled = h.cfg.Alerts.Enabled
	h.incidents = incident.New(h.log.With("component", "incident"), cfg, h.db, func() time.Duration {
		return time.Duration(h.alerts.Settings().CorrelateWindowSec) * time.Second
	}, nil, h.reg)
	h.parts.add("incidents", h.incidents.Start, noCtx(h.incidents.Stop))
}
