package alerting

import (
	"context"
	"time"

	"netmon/alerting/rules"
)

// NameSource lists names hosts were seen using since a time: the hub
// capture's DNS domains (the capture), the DNS names, TLS SNI and HTTP
// Hosts of the agents' deep collection (the store).
type NameSource interface {
	Names(ctx context.Context, since time.Time) ([]rules.Name, error)
}

// iocLookback is how far back each ioc cycle reads reports. Agents'
// reports are stamped with their minute's start and arrive up to an
// interval later, so a cycle reads a few minutes back; the rule raises a
// name only when its report is newer than the one it has seen.
const iocLookback = 5 * time.Minute

// EvalIOC runs the ioc rule once over the names reported recently; the
// loop calls it every IOCEvery (spec 6.3: about every 30 s).
func (e *Engine) EvalIOC(ctx context.Context) {
	start := time.Now()
	defer func() { e.m.evalTime.WithLabelValues("ioc").Observe(time.Since(start).Seconds()) }()
	now := e.dep.Now()
	on := e.Settings().IOC.Enabled
	if !on || len(e.dep.Names) == 0 || e.dep.Threats == nil {
		return
	}
	var names []rules.Name
	for _, src := range e.dep.Names {
		ns, err := src.Names(ctx, now.Add(-iocLookback))
		if err != nil {
			// The cycle is skipped whole: the next one reads the names
			// again (lookback), and the rule's seen-table stays as it was.
			e.m.errors.Inc()
			e.log.Warn("read observed names", "error", err)
			return
		}
		names = append(names, ns...)
	}
	e.lock()
	defer e.unlock()
	e.iocBuf = e.ioc.Eval(names, e.dep.Threats, e.iocBuf[:0])
	e.raiseLocked(ctx, now, e.iocBuf)
}
