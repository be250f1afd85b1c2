package rules

import (
	"fmt"
	"strconv"
	"time"
)

// Iface is the iface_util rule: an interface's utilisation (the larger of
// in and out over its link speed) above WarnPct or CritPct for SustainSec.
// Any source of interface rates feeds it (agents' now, devices' later); an
// interface of unknown speed is not judged.
type Iface struct {
	since map[ifaceKey]ifaceRun
}

type ifaceKey struct {
	agent int64
	name  string
}

type ifaceRun struct {
	warnSince, critSince time.Time
}

// IfaceConfig is the rule's part of the alert settings.
type IfaceConfig struct {
	WarnPct, CritPct float64
	SustainSec       int
}

// Eval judges the rates at now and appends an alert for each interface
// over a threshold for long enough, keyed <agent>|<interface>.
func (r *Iface) Eval(now time.Time, rates []IfaceRate, cfg IfaceConfig, out []Alert) []Alert {
	if r.since == nil {
		r.since = map[ifaceKey]ifaceRun{}
	}
	sustain := time.Duration(cfg.SustainSec) * time.Second
	for _, x := range rates {
		if x.SpeedBps <= 0 {
			continue
		}
		k := ifaceKey{x.AgentID, x.Name}
		pct := max(x.InBps, x.OutBps) / x.SpeedBps * 100
		run := r.since[k]
		run.warnSince = overSince(run.warnSince, cfg.WarnPct > 0 && pct >= cfg.WarnPct, now)
		run.critSince = overSince(run.critSince, cfg.CritPct > 0 && pct >= cfg.CritPct, now)
		if run.warnSince.IsZero() {
			delete(r.since, k)
			continue
		}
		r.since[k] = run
		sev, level, since := 0, "", time.Time{}
		switch {
		case !run.critSince.IsZero() && now.Sub(run.critSince) >= sustain:
			sev, level, since = SeverityIfaceCrit, "crit", run.critSince
		case now.Sub(run.warnSince) >= sustain:
			sev, level, since = SeverityIfaceWarn, "warn", run.warnSince
		default:
			continue
		}
		out = append(out, Alert{
			Kind: KindIfaceUtil, Key: strconv.FormatInt(x.AgentID, 10) + "|" + x.Name, Severity: sev, Site: x.Site, AgentID: x.AgentID,
			Message: fmt.Sprintf("interface %s at %.0f%% utilisation (%s) for %s", x.Name, pct, level, now.Sub(since).Truncate(time.Second)),
		})
	}
	return out
}

func overSince(since time.Time, over bool, now time.Time) time.Time {
	switch {
	case !over:
		return time.Time{}
	case since.IsZero():
		return now
	}
	return since
}
