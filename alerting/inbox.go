package alerting

import (
	"cmp"
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"netmon/alerting/rules"
	"netmon/store/record"
)

// Operators' changes and storms (RELIABILITY case 35).
//
// An evaluation holds e.mu across its store writes; a storm once held it
// for 41 s per 30-second ioc cycle, and a silence or a configuration
// change, which took the same mutex, waited as long. Operators' changes
// now go through the inbox: Apply, SilencesChanged and StateChanged store
// them under the inbox's own short mutex and return; the engine takes
// them before every alert it raises (absorbLocked), so a silence created
// in the middle of a storm applies to the storm's next alert. When no
// evaluation runs, the change is taken at once (tryAbsorb).
//
// A cycle is bounded too: it writes at most MaxWritesPerCycle events or
// repeats and spends at most CycleBudget; what is left is shed, counted
// in netmon_alerting_shed_total{kind,reason}. When a cycle raises more
// than it may write, the higher severities go first, and within a
// severity the sources (agents) take turns, so one agent's storm cannot
// shed another agent's alert.

// inbox holds operators' changes not yet taken by the engine.
type inbox struct {
	mu       sync.Mutex
	settings *Settings // a configuration to apply
	cur      Settings  // the configuration in force or mailed (Settings())
	silences []record.AlertSilence
	silAt    time.Time
	silSet   bool
	states   []record.AlertEvent
	// waiting is set when something is mailed, so absorbLocked costs an
	// atomic load when nothing is.
	waiting atomic.Bool
}

// Reasons of netmon_alerting_shed_total.
const (
	ShedCap    = "cycle_cap"    // the cycle wrote MaxWritesPerCycle already
	ShedBudget = "cycle_budget" // the cycle spent CycleBudget already
)

// OutcomeShed is a raised condition the cycle had no room for.
const OutcomeShed = "shed"

// lock takes the evaluation state with the operators' changes applied.
func (e *Engine) lock() {
	e.mu.Lock()
	e.absorbLocked()
}

// unlock releases the evaluation state.
func (e *Engine) unlock() {
	e.openN.Store(int64(len(e.open)))
	e.mu.Unlock()
}

// tryAbsorb applies what was mailed now when no evaluation runs; else
// the running one takes it before its next alert.
func (e *Engine) tryAbsorb() {
	if e.mu.TryLock() {
		e.absorbLocked()
		e.unlock()
	}
}

// absorbLocked applies the operators' changes mailed since the last call.
func (e *Engine) absorbLocked() {
	if !e.in.waiting.Swap(false) {
		return
	}
	e.in.mu.Lock()
	s, sils, silAt, silSet, states := e.in.settings, e.in.silences, e.in.silAt, e.in.silSet, e.in.states
	e.in.settings, e.in.silences, e.in.silSet, e.in.states = nil, nil, false, nil
	e.in.mu.Unlock()
	if s != nil {
		e.applyLocked(*s)
	}
	// The engine's own refresh may have read a newer list meanwhile.
	if silSet && !silAt.Before(e.silAt) {
		e.silences, e.silAt = sils, silAt
	}
	for _, ev := range states {
		k := ev.Kind + "|" + ev.Key
		o := e.open[k]
		if o == nil || o.id != ev.ID {
			continue
		}
		if ev.State == record.AlertResolved {
			delete(e.open, k)
			if e.dep.Sink != nil {
				e.dep.Sink.Offer(ev)
			}
			continue
		}
		o.state = ev.State
	}
}

// guard runs one evaluation of a loop and turns a panic into a counted
// metric and a logged error: the loop goes on with its next cycle
// (RELIABILITY case 33). Every evaluation releases e.mu by a deferred
// unlock, so a panic does not leave it held.
func (e *Engine) guard(loop string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			e.m.panics.WithLabelValues(loop).Inc()
			e.log.Error("alert evaluation panicked", "loop", loop, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	fn()
}

// raiseLocked applies the lifecycle of spec 3 to each raised condition
// (raiseOneLocked), within the cycle's bounds.
func (e *Engine) raiseLocked(ctx context.Context, now time.Time, alerts []rules.Alert) {
	if len(alerts) > e.cfg.MaxWritesPerCycle {
		alerts = fairOrder(alerts)
	}
	began := time.Now()
	writes := 0
	for i, a := range alerts {
		reason := ""
		switch {
		case writes >= e.cfg.MaxWritesPerCycle:
			reason = ShedCap
		case time.Since(began) > e.cfg.CycleBudget:
			reason = ShedBudget
		}
		if reason != "" {
			e.shedLocked(reason, alerts[i:])
			return
		}
		e.absorbLocked()
		out := e.raiseOneLocked(ctx, now, a)
		e.m.fired.WithLabelValues(a.Kind, out).Inc()
		if out == OutcomeStored || out == OutcomeRepeat || out == OutcomeError {
			writes++
		}
	}
}

// shedLocked counts the conditions a cycle had no room for.
func (e *Engine) shedLocked(reason string, rest []rules.Alert) {
	byKind := map[string]int{}
	for _, a := range rest {
		byKind[a.Kind]++
	}
	for k, n := range byKind {
		e.m.fired.WithLabelValues(k, OutcomeShed).Add(float64(n))
		e.m.shed.WithLabelValues(k, reason).Add(float64(n))
	}
	e.log.Warn("alert cycle shed conditions", "reason", reason, "count", len(rest))
}

// fairOrder returns alerts ordered for a cycle that cannot write them
// all: higher severity first; within a severity, each agent's first
// alert, then each agent's second, and so on (a stable interleave).
func fairOrder(alerts []rules.Alert) []rules.Alert {
	type ranked struct {
		a    rules.Alert
		turn int
		i    int
	}
	seen := map[[2]int64]int{}
	rs := make([]ranked, len(alerts))
	for i, a := range alerts {
		k := [2]int64{int64(a.Severity), a.AgentID}
		rs[i] = ranked{a: a, turn: seen[k], i: i}
		seen[k]++
	}
	slices.SortFunc(rs, func(x, y ranked) int {
		return cmp.Or(cmp.Compare(y.a.Severity, x.a.Severity), cmp.Compare(x.turn, y.turn), cmp.Compare(x.i, y.i))
	})
	out := make([]rules.Alert, len(rs))
	for i, r := range rs {
		out[i] = r.a
	}
	return out
}
