package devices

import (
	"context"
	"strconv"
	"time"

	"netmon/alerting/rules"
)

// The alert engine's inputs the device component owns (alerting.Deps
// Ifaces and Firewalls), read from each device's latest successful poll.

// IfaceRates lists the interfaces of SNMP devices with a utilisation
// (trusted speed, oper-up, a rate) in a poll of their last three
// intervals: a device that stopped answering does not keep alerting on
// its last figures. The rule keys on an agent id: devices are agent 0,
// their interfaces named "<device> (device <id>) <iface>" so keys stay
// apart. Rates are in bits per second. REST devices' interfaces are
// left out, as before the drivers shared a scheduler.
func (c *Component) IfaceRates(context.Context) ([]rules.IfaceRate, error) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []rules.IfaceRate
	for _, st := range c.devices {
		if st.latest == nil || st.drv.Name() != "snmp" || now.Sub(st.latestAt) > 3*c.interval(st.dev, st.drv) {
			continue
		}
		name := st.dev.Name + " (device " + strconv.FormatInt(st.dev.ID, 10) + ") "
		for _, f := range st.latest.Ifaces {
			if f.RxUtilPct == nil {
				continue
			}
			out = append(out, rules.IfaceRate{Site: st.dev.Site, Name: name + f.Name, SpeedBps: float64(f.SpeedBps), InBps: f.RxBps * 8, OutBps: f.TxBps * 8})
		}
	}
	return out, nil
}

// firewallMaxAge bounds how old a latest poll may be at all; within it a
// state counts only if no older than two of the device's intervals.
const firewallMaxAge = 48 * time.Hour

// FirewallStates lists each REST device's latest successful poll if no
// older than two of its intervals (a device that stopped answering is
// judged by its last_error, not by an old tunnel state): its IPsec
// tunnels, SD-WAN health-check members and session count.
func (c *Component) FirewallStates(context.Context) ([]rules.FirewallState, error) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []rules.FirewallState
	for _, st := range c.devices {
		l := st.latest
		if l == nil || l.Firewall == nil {
			continue
		}
		if age := now.Sub(st.latestAt); age > firewallMaxAge || age > 2*c.interval(st.dev, st.drv) {
			continue
		}
		s := rules.FirewallState{DeviceID: st.dev.ID, Name: st.dev.Name, Site: st.dev.Site}
		if l.Resources != nil {
			s.Sessions = l.Resources.Sessions
		}
		for _, t := range l.Firewall.VPN {
			if t.Kind == "ipsec" {
				s.Tunnels = append(s.Tunnels, rules.TunnelState{VDOM: t.VDOM, Name: t.Name, Up: t.Status == "up"})
			}
		}
		for _, h := range l.Firewall.SDWAN {
			s.Health = append(s.Health, rules.HealthState{VDOM: h.VDOM, Name: h.Name, Member: h.Member, Up: h.Status == "up",
				LatencyMS: h.LatencyMS, JitterMS: h.JitterMS, LossPct: h.LossPct})
		}
		out = append(out, s)
	}
	return out, nil
}
