package hub

import (
	"time"

	"netmon/alerting/incident"
	"netmon/app/panics"
	"netmon/app/topology"
)

// buildIncidents builds the correlation engine over the stored alert
// events; it runs with the alert engine (-alerts, HubConfig.Shared) and
// reads the operator's correlate_window_sec from it.
func (h *Hub) buildIncidents() {
	alerts := h.alerts
	h.incidents = incident.New(h.log.With("component", "incident"), h.cfg.Incident, h.db, func() time.Duration {
		return time.Duration(alerts.Settings().CorrelateWindowSec) * time.Second
	}, nil, h.reg)
	h.incidents.IsLeader = h.leader.IsLeader
	h.parts.add("incidents", h.incidents.Start, noCtx(h.incidents.Stop))
}

// buildTopology builds the network graph over the stored devices, agents
// and edges, with its edge expiry.
func (h *Hub) buildTopology() {
	log := h.log.With("component", "topology")
	h.topology = topology.New(log, h.cfg.Topology, topology.Deps{Store: h.db, Panics: panics.New(h.reg, log, "topology")})
	h.parts.add("topology", h.topology.Start, noCtx(h.topology.Stop))
}
