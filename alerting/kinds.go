package alerting

import "netmon/alerting/rules"

// KindTimeDrift is raised when a compliance checkpoint's clock is ahead of
// the system clock (spec 6.3; the hub raises it from app/compliance).
const KindTimeDrift = "time_drift"

// Kinds lists every alert kind the hub raises (spec 6.3), in the spec's
// order: the one list the API serves as its AlertKind enumeration, so a
// console offers exactly these. sla_breach, named by the spec, is left out
// while no rule raises it.
func Kinds() []string {
	return []string{
		rules.KindBandwidth, rules.KindPort, rules.KindProc, rules.KindTarget,
		KindAnomaly, rules.KindIOC, rules.KindIfaceUtil,
		rules.KindVPNDown, rules.KindSDWANBreach, rules.KindHighSessions,
		KindTimeDrift,
	}
}
