package rules

import (
	"fmt"
	"strconv"
)

// The firewall-device rules of spec 6.3, fed by the firewall REST
// driver's latest poll of each device (collectors/fwrest):
//   - vpn_down (severity 8): an IPsec tunnel is down, when the setting
//     vpn_down is on; keyed <device>|<vdom>/<tunnel>.
//   - sdwan_sla_breach (6): an SD-WAN health-check member's latency,
//     jitter or loss at or over its threshold (0 turns that measure off),
//     or the member down; keyed <device>|<vdom>/<check>/<member>.
//   - high_sessions (5): the device's session count at or over
//     max_sessions (0: off); keyed <device>.
// They judge each poll as it is (a poll is a minute or more apart, so a
// sustain would be a poll count): the engine's repeat counting and
// cooldown keep a lasting condition to one event.

const (
	KindVPNDown        = "vpn_down"
	KindSDWANBreach    = "sdwan_sla_breach"
	KindHighSessions   = "high_sessions"
	SeverityVPNDown    = 8
	SeveritySDWAN      = 6
	SeverityHighSessns = 5
)

// FirewallState is one device's latest poll as the rules read it.
type FirewallState struct {
	DeviceID int64
	Name     string
	Site     string
	Tunnels  []TunnelState
	Health   []HealthState
	Sessions *int64
}

// TunnelState is an IPsec tunnel's state.
type TunnelState struct {
	VDOM, Name string
	Up         bool
}

// HealthState is an SD-WAN health-check member's measures.
type HealthState struct {
	VDOM, Name, Member string
	Up                 bool
	LatencyMS          float64
	JitterMS           float64
	LossPct            float64
}

// FirewallConfig is the rules' part of the alert settings (fwvendor).
type FirewallConfig struct {
	VPNDown     bool
	LatencyMS   float64
	JitterMS    float64
	LossPct     float64
	MaxSessions int64
}

// EvalFirewall appends the alerts the devices' states raise.
func EvalFirewall(states []FirewallState, cfg FirewallConfig, out []Alert) []Alert {
	for i := range states {
		s := &states[i]
		dev := strconv.FormatInt(s.DeviceID, 10)
		if cfg.VPNDown {
			for _, t := range s.Tunnels {
				if !t.Up {
					out = append(out, Alert{Kind: KindVPNDown, Key: dev + "|" + t.VDOM + "/" + t.Name, Severity: SeverityVPNDown, Site: s.Site,
						Message: fmt.Sprintf("IPsec tunnel %s (vdom %s) of %s (device %s) is down", t.Name, t.VDOM, s.Name, dev)})
				}
			}
		}
		for _, h := range s.Health {
			why := ""
			switch {
			case !h.Up:
				why = "member down"
			case cfg.LossPct > 0 && h.LossPct >= cfg.LossPct:
				why = fmt.Sprintf("loss %.1f%% >= %.1f%%", h.LossPct, cfg.LossPct)
			case cfg.LatencyMS > 0 && h.LatencyMS >= cfg.LatencyMS:
				why = fmt.Sprintf("latency %.1f ms >= %.1f ms", h.LatencyMS, cfg.LatencyMS)
			case cfg.JitterMS > 0 && h.JitterMS >= cfg.JitterMS:
				why = fmt.Sprintf("jitter %.1f ms >= %.1f ms", h.JitterMS, cfg.JitterMS)
			}
			if why == "" || (why == "member down" && cfg.LossPct <= 0 && cfg.LatencyMS <= 0 && cfg.JitterMS <= 0) {
				continue // no SLA configured: a down member alone is not judged
			}
			out = append(out, Alert{Kind: KindSDWANBreach, Key: dev + "|" + h.VDOM + "/" + h.Name + "/" + h.Member, Severity: SeveritySDWAN, Site: s.Site,
				Message: fmt.Sprintf("SD-WAN health check %s member %s (vdom %s) of %s (device %s): %s", h.Name, h.Member, h.VDOM, s.Name, dev, why)})
		}
		if cfg.MaxSessions > 0 && s.Sessions != nil && *s.Sessions >= cfg.MaxSessions {
			out = append(out, Alert{Kind: KindHighSessions, Key: dev, Severity: SeverityHighSessns, Site: s.Site,
				Message: fmt.Sprintf("%s (device %s) has %d sessions (>= %d)", s.Name, dev, *s.Sessions, cfg.MaxSessions)})
		}
	}
	return out
}
