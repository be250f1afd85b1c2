package hub

import (
	"netmon/alerting"
	"netmon/alerting/health"
	"netmon/app/audit"
	"netmon/collectors/geo/threat"
)

// buildAlerts builds the alert engine over its inputs' owners, all built
// before it: the capture's rates and DNS names, the hub host's sockets,
// the fleet's agents (inventories, interface rates, traffic series), the
// device component (interface rates, firewall states), the threat list
// and the store. The configuration is alerting's own (SettingsService),
// the routes notify's; the live feed, built after it, carries its events;
// the compliance log, built before it, raises time_drift through it.
func (h *Hub) buildAlerts() {
	h.buildNotify()
	rows := alerting.NewSettingsRows(h.db, h.vault)
	h.alerts = alerting.New(h.log.With("component", "alerting"), h.cfg.Alerts, alerting.Deps{
		IsLeader:    h.leader.IsLeader,
		Store:       h.db,
		Traffic:     h.capture,
		Inventories: []alerting.InventorySource{h.conns, h.fleet},
		Ifaces:      []alerting.IfaceSource{h.fleet, h.devices},
		Firewalls:   h.devices,
		Settings:    rows.Load,
		Sink:        h.notifier,
		Notify:      h.notifier,
		Names:       []alerting.NameSource{h.capture, h.db},
		Threats:     threat.Lists{IOCWatch: h.iocList},
		Rates:       h.fleet,
	}, h.reg)
	h.alertSettings = alerting.NewSettingsService(rows, audit.Builder{}, h.alerts)
	drops := []health.Dropper{h.queue, h.flows, h.fleet}
	if h.nats != nil {
		drops = append(drops, h.nats)
	}
	h.health = health.New(health.Deps{Alerts: h.db, Agents: h.fleet, Capture: h.capture, Drops: drops})
	h.compliance.OnDrift(h.alerts.TimeDrift)
	h.parts.add("alerts", h.alerts.Start, noCtx(h.alerts.Stop))
}
