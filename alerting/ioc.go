package alerting

import (
	"context"
	"time"

	"netmon/alerting/rules"
)

// NameSource lists the names hosts were seen using since a time: the DNS
// names, TLS SNI and HTTP Hosts of the agents' deep collection and the
// hub capture's DNS domains.
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
	if !on || e.dep.Names == nil || e.dep.Threats == nil {
		return
	}
	names, err := e.dep.Names.Names(ctx, now.Add(-iocLookback))
	if err != nil {
		e.m.errors.Inc()
		e.log.Warn("read observed names", "error", err)
		return
	}
	e.lock()
	defer e.unlock()
	e.iocBuf = e.ioc.Eval(names, e.dep.Threats, e.iocBuf[:0])
	e.raiseLocked(ctx, now, e.iocBuf)
}
