package alerting

import (
	"context"

	"netmon/alerting/rules"
)

// KindTimeDrift is raised when a compliance checkpoint's clock is ahead of
// the system clock (spec 6.3; the hub raises it from app/compliance).
const KindTimeDrift = "time_drift"

// KindSLABreach is raised when an SLA target is violated (spec 6.3; the
// hub raises it from app/reports' SLA evaluator through Engine.Raise).
const KindSLABreach = "sla_breach"

// Kinds lists every alert kind the hub raises (spec 6.3), in the spec's
// order: the one list the API serves as its AlertKind enumeration, so a
// console offers exactly these.
func Kinds() []string {
	return []string{
		rules.KindBandwidth, rules.KindPort, rules.KindProc, rules.KindTarget,
		KindAnomaly, rules.KindIOC, rules.KindIfaceUtil,
		rules.KindVPNDown, rules.KindSDWANBreach, rules.KindHighSessions,
		KindSLABreach, KindTimeDrift,
	}
}

// TimeDrift raises the time_drift alert (spec 6.3): the compliance log
// calls it when a checkpoint's clock is ahead of the system clock.
// Severity 6: the spec gives none; a clock that went back puts the seals'
// order in doubt.
func (e *Engine) TimeDrift(message string) {
	e.log.Warn("time_drift", "message", message)
	e.Raise(context.Background(), rules.Alert{Kind: KindTimeDrift, Key: "compliance", Message: message, Severity: 6})
}
