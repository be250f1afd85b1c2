package alerting

import (
	"context"
	"strings"
	"time"

	"netmon/alerting/rules"
	"netmon/store/record"
)

// Outcomes of a raised condition (the metric's outcome label).
const (
	OutcomeStored   = "stored"   // a new event row
	OutcomeRepeat   = "repeat"   // an open event's count incremented
	OutcomeCooldown = "cooldown" // same kind|key stored within the cooldown
	OutcomeSilenced = "silenced" // a silence matched
	OutcomeDisabled = "disabled" // alerting is off in the settings
	OutcomeError    = "error"    // the store refused
)

// EvalSnapshot runs the capture rules (bw, target) once and the
// auto-resolve sweep; the loop calls it every SnapshotEvery.
func (e *Engine) EvalSnapshot(ctx context.Context) {
	start := time.Now()
	defer func() { e.m.evalTime.WithLabelValues("snapshot").Observe(time.Since(start).Seconds()) }()
	now := e.dep.Now()
	var t rules.Traffic
	if e.dep.Traffic != nil {
		t = e.dep.Traffic.Traffic()
	}
	e.lock()
	defer e.unlock()
	s := &e.settings
	e.buf = e.buf[:0]
	if s.Bandwidth.Enabled {
		if a, ok := e.bw.Eval(t, rules.BWConfig{InMbps: s.Bandwidth.InMbps, OutMbps: s.Bandwidth.OutMbps, Seconds: s.Bandwidth.Seconds}); ok {
			e.buf = append(e.buf, a)
		}
	}
	if s.NewTarget.Enabled && t.Running {
		e.buf = e.target.Eval(t, s.NewTarget.MinTotalMB, e.buf)
	}
	e.raiseLocked(ctx, now, e.buf)
	e.sweepLocked(ctx, now)
	if e.cfg.SilenceRefresh > 0 && now.Sub(e.silAt) >= e.cfg.SilenceRefresh && e.dep.Store != nil {
		if list, err := e.dep.Store.AlertSilences(ctx, now.Unix()); err == nil {
			e.silences, e.silAt = list, now
		} else {
			e.m.errors.Inc()
			e.log.Warn("read alert silences", "error", err)
		}
	}
}

// EvalInventory runs the connection, interface and firewall-device rules
// (port, proc, iface_util, vpn_down, sdwan_sla_breach, high_sessions)
// once; the loop calls it every InventoryEvery.
func (e *Engine) EvalInventory(ctx context.Context) {
	start := time.Now()
	defer func() { e.m.evalTime.WithLabelValues("inventory").Observe(time.Since(start).Seconds()) }()
	now := e.dep.Now()
	var invs []rules.Inventory
	var rates []rules.IfaceRate
	var err error
	for _, src := range e.dep.Inventories {
		got, err := src.Inventories(ctx)
		if err != nil {
			e.m.errors.Inc()
			e.log.Warn("read connection inventories", "error", err)
		}
		invs = append(invs, got...)
	}
	for _, src := range e.dep.Ifaces {
		got, err := src.IfaceRates(ctx)
		if err != nil {
			e.m.errors.Inc()
			e.log.Warn("read interface rates", "error", err)
		}
		rates = append(rates, got...)
	}
	var fws []rules.FirewallState
	if e.dep.Firewalls != nil {
		if fws, err = e.dep.Firewalls.FirewallStates(ctx); err != nil {
			e.m.errors.Inc()
			e.log.Warn("read firewall states", "error", err)
		}
	}
	e.lock()
	defer e.unlock()
	e.buf = e.evalInventoryLocked(now, invs, rates, e.buf[:0])
	f := e.settings.FWVendor
	e.buf = rules.EvalFirewall(fws, rules.FirewallConfig{VPNDown: f.VPNDown, LatencyMS: f.SDWANLatencyMS, JitterMS: f.SDWANJitterMS,
		LossPct: f.SDWANLossPct, MaxSessions: int64(f.MaxSessions)}, e.buf)
	e.raiseLocked(ctx, now, e.buf)
}

// evalInventoryLocked runs the inventory rules over their inputs; it
// allocates only for what fires (and a host's first seen-table).
func (e *Engine) evalInventoryLocked(now time.Time, invs []rules.Inventory, rates []rules.IfaceRate, out []rules.Alert) []rules.Alert {
	s := &e.settings
	for i := range invs {
		if s.Ports.Enabled {
			out = e.port.Eval(invs[i], out)
		}
		if s.NewProc.Enabled {
			out = e.proc.Eval(invs[i], e.ignore, out)
		}
	}
	out = e.iface.Eval(now, rates, rules.IfaceConfig{WarnPct: s.Iface.WarnPct, CritPct: s.Iface.CritPct, SustainSec: s.Iface.SustainSec}, out)
	return out
}

// Raise feeds conditions raised outside the engine's own rules (tests,
// later rule kinds) through the same lifecycle.
func (e *Engine) Raise(ctx context.Context, alerts ...rules.Alert) {
	now := e.dep.Now()
	e.lock()
	defer e.unlock()
	e.raiseLocked(ctx, now, alerts)
}

// raiseOneLocked applies the lifecycle of spec 3 to one raised
// condition: an open event of the same kind|key counts a repeat (no new
// row); otherwise the cooldown and the silences may suppress it;
// otherwise a new firing event is stored. A grouped condition (the ioc
// rule's names under one listed entry) counts a.Count occurrences.
func (e *Engine) raiseOneLocked(ctx context.Context, now time.Time, a rules.Alert) string {
	if !e.settings.Enabled {
		return OutcomeDisabled
	}
	k := a.Kind + "|" + a.Key
	n := max(a.Count, 1)
	if o := e.open[k]; o != nil {
		o.count += n
		o.lastSeen = now
		if e.dep.Store != nil {
			if err := e.dep.Store.RepeatAlertEvent(ctx, o.id, o.count, now.Unix()); err != nil {
				e.m.errors.Inc()
				e.log.Warn("count alert repeat", "id", o.id, "error", err)
			}
		}
		return OutcomeRepeat
	}
	cooldown := time.Duration(e.settings.CooldownMin) * time.Minute
	if last, ok := e.last[k]; ok && now.Sub(last) < cooldown {
		return OutcomeCooldown
	}
	if silenced(e.silences, now.Unix(), a.Kind, a.Site, a.Key) {
		return OutcomeSilenced
	}
	ev := record.AlertEvent{TS: now.Unix(), Kind: a.Kind, Key: a.Key, Message: a.Message, Severity: a.Severity,
		State: record.AlertFiring, Site: a.Site, Count: n, AgentID: a.AgentID, LastTS: now.Unix(), Process: a.Process}
	if e.dep.Store != nil {
		stored, err := e.dep.Store.InsertAlertEvent(ctx, ev)
		if err != nil {
			e.m.errors.Inc()
			e.log.Warn("store alert event", "kind", a.Kind, "error", err)
			return OutcomeError
		}
		ev = stored
	}
	e.open[k] = &openEvent{id: ev.ID, count: n, state: record.AlertFiring, lastSeen: now}
	e.last[k] = now
	e.tickMu.Lock()
	if len(e.pending) >= max(e.cfg.TickBuffer, 1) {
		e.pending = e.pending[1:]
		e.m.tickDrops.Inc()
	}
	e.pending = append(e.pending, ev)
	e.tickMu.Unlock()
	if e.dep.Sink != nil {
		e.dep.Sink.Offer(ev) // never blocks: a bounded queue, full = dropped and counted
	}
	e.pruneLocked(now, cooldown)
	return OutcomeStored
}

// pruneLocked forgets cooldown entries that have expired and are not
// open, so the table stays the size of what fired recently.
func (e *Engine) pruneLocked(now time.Time, cooldown time.Duration) {
	if len(e.last) < 4096 {
		return
	}
	for k, t := range e.last {
		if now.Sub(t) >= cooldown && e.open[k] == nil {
			delete(e.last, k)
		}
	}
}

// sweepLocked resolves open events whose condition has not repeated for
// auto_resolve_min minutes (0: never).
func (e *Engine) sweepLocked(ctx context.Context, now time.Time) {
	min := e.settings.AutoResolveMin
	if min <= 0 {
		return
	}
	idle := time.Duration(min) * time.Minute
	for k, o := range e.open {
		if now.Sub(o.lastSeen) < idle {
			continue
		}
		if e.dep.Store != nil {
			if err := e.dep.Store.ResolveAlertEvent(ctx, o.id, now.Unix()); err != nil {
				e.m.errors.Inc()
				e.log.Warn("auto-resolve alert", "id", o.id, "error", err)
				continue
			}
		}
		delete(e.open, k)
		if e.dep.Sink != nil {
			kind, key, _ := strings.Cut(k, "|")
			e.dep.Sink.Offer(record.AlertEvent{ID: o.id, Kind: kind, Key: key, State: record.AlertResolved, Count: o.count,
				LastTS: o.lastSeen.Unix(), ResolvedTS: now.Unix()})
		}
	}
}
