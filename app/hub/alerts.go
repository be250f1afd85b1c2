package hub

import (
	"context"
	"time"

	"netmon/alerting"
	"netmon/alerting/health"
	"netmon/alerting/rules"
	"netmon/app/audit"
	"netmon/capture"
	"netmon/capture/proc"
)

// buildAlerts builds the alert engine over its inputs' owners: the
// capture's rates, the hub host's sockets and the fleet's agents
// (inventories, interface rates, traffic series), the device pollers,
// the threat list and the store. The configuration is alerting's own
// (SettingsService), the routes notify's; the live feed carries the new
// events.
func (h *Hub) buildAlerts() {
	h.buildNotify()
	rows := alerting.NewSettingsRows(h.db, h.vault)
	h.alerts = alerting.New(h.log.With("component", "alerting"), h.cfg.Alerts, alerting.Deps{
		Store:       h.db,
		Traffic:     alertTraffic{h.capture},
		Inventories: []alerting.InventorySource{hostInventory{h.conns}, h.fleet},
		Ifaces:      []alerting.IfaceSource{h.fleet, h.devices},
		Firewalls:   h.devices,
		Settings:    rows.Load,
		Sink:        h.notifier,
		Notify:      h.notifier,
		Names:       alertNames{h.capture, h.db},
		Threats:     iocMatcher{h.iocList},
		Rates:       h.fleet,
	}, h.reg)
	h.alertSettings = alerting.NewSettingsService(rows, audit.Builder{}, h.alerts)
	h.health = health.New(health.Deps{Alerts: h.db, Agents: h.fleet, Capture: h.capture,
		Drops: []health.Dropper{h.queue, h.flows, h.fleet}})
	h.parts.add("alerts", h.alerts.Start, noCtx(h.alerts.Stop))
}

// alertTraffic reads the capture's snapshot for the bw and target rules.
type alertTraffic struct{ c *capture.Capture }

func (a alertTraffic) Traffic() rules.Traffic {
	s := a.c.Snapshot()
	t := rules.Traffic{Running: s.Running, InBps: s.BpsIn, OutBps: s.BpsOut}
	for _, e := range s.TopEndpoints {
		if !e.Local {
			t.Endpoints = append(t.Endpoints, rules.Endpoint{IP: e.IP, Total: e.Total})
		}
	}
	return t
}

// hostInventory is the hub host's established connections, read again
// every cycle (each read is a new observation; the agents' come from the
// fleet).
type hostInventory struct{ conns *proc.Lister }

func (h hostInventory) Inventories(ctx context.Context) ([]rules.Inventory, error) {
	cs, err := h.conns.Cached(ctx, 5*time.Second)
	if err != nil {
		// As before: the host's part is left out, the agents' evaluated.
		return nil, nil
	}
	inv := rules.Inventory{}
	for _, c := range cs {
		inv.Conns = rules.AppendEstablished(inv.Conns, c.RemoteAddr, c.Status, c.Process, 0, "")
	}
	return []rules.Inventory{inv}, nil
}
