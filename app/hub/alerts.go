package hub

import (
	"context"
	"strconv"
	"time"

	"netmon/alerting"
	"netmon/alerting/health"
	"netmon/alerting/rules"
	"netmon/app/audit"
	"netmon/collectors/fwrest"
	"netmon/collectors/geo/threat"
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
		Traffic:     h.capture,
		Inventories: []alerting.InventorySource{h.conns, h.fleet},
		Ifaces:      []alerting.IfaceSource{h.fleet, deviceIfaceRates{h}},
		Firewalls:   firewallStates{h},
		Settings:    rows.Load,
		Sink:        h.notifier,
		Notify:      h.notifier,
		Names:       []alerting.NameSource{h.capture, h.db},
		Threats:     threat.Lists{IOCWatch: h.iocList},
		Rates:       h.fleet,
	}, h.reg)
	h.alertSettings = alerting.NewSettingsService(rows, audit.Builder{}, h.alerts)
	h.health = health.New(health.Deps{Alerts: h.db, Agents: h.fleet, Capture: h.capture,
		Drops: []health.Dropper{h.queue, h.flows, h.fleet}})
	h.parts.add("alerts", h.alerts.Start, noCtx(h.alerts.Stop))
}

// deviceIfaceRates feeds the iface_util rule the device interfaces of
// the SNMP poller's latest polls (the agents' come from the fleet). The
// rule keys on an agent id: devices are agent 0, their interfaces named
// "<device> (device <id>) <iface>" so keys stay apart. It reads the
// poller late (built after the engine): the device component replaces it.
type deviceIfaceRates struct{ h *Hub }

func (d deviceIfaceRates) IfaceRates(context.Context) ([]rules.IfaceRate, error) {
	var out []rules.IfaceRate
	if d.h.poller != nil {
		for _, r := range d.h.poller.IfaceRates() {
			out = append(out, rules.IfaceRate{Site: r.Site, Name: r.DeviceName + " (device " + strconv.FormatInt(r.DeviceID, 10) + ") " + r.Iface,
				SpeedBps: float64(r.SpeedBps), InBps: r.RxBps * 8, OutBps: r.TxBps * 8})
		}
	}
	return out, nil
}

// firewallStates feeds the firewall-device rules each REST device's
// latest successful poll, if no older than two of its intervals (a
// device that stopped answering is judged by its last_error, not by an
// old tunnel state).
type firewallStates struct{ h *Hub }

func (f firewallStates) FirewallStates(context.Context) ([]rules.FirewallState, error) {
	if f.h.fwPoller == nil {
		return nil, nil
	}
	now := time.Now()
	var out []rules.FirewallState
	for _, l := range f.h.fwPoller.LatestPolls(48 * time.Hour) {
		if now.Sub(l.At) > 2*fwrest.Interval(l.Device) {
			continue
		}
		out = append(out, ruleState(l))
	}
	return out, nil
}

func ruleState(l fwrest.Latest) rules.FirewallState {
	s := rules.FirewallState{DeviceID: l.Device.ID, Name: l.Device.Name, Site: l.Device.Site, Sessions: l.Result.Sessions}
	for _, t := range l.Result.Tunnels {
		s.Tunnels = append(s.Tunnels, rules.TunnelState{VDOM: t.VDOM, Name: t.Name, Up: t.Status == "up"})
	}
	for _, h := range l.Result.Health {
		s.Health = append(s.Health, rules.HealthState{VDOM: h.VDOM, Name: h.Name, Member: h.Member, Up: h.Status == "up",
			LatencyMS: h.LatencyMS, JitterMS: h.JitterMS, LossPct: h.LossPct})
	}
	return s
}
