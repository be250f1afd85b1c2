// Package panics keeps a panic in one background iteration from taking
// the hub down (STYLE habit 22, RELIABILITY case 33): a poller, a
// schedule or a read loop runs each item under Guard.Do, and a panic
// there becomes an error for that item (a device's last_error), a log
// line with the stack, and a count in netmon_panics_total{component}.
//
// A leaf: it imports nothing of ours, so the collectors and the store,
// which may import only leaves, can use it.
package panics

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// MetricName is the counter of recovered panics, labelled by component.
const MetricName = "netmon_panics_total"

// Error is a recovered panic: the value it carried and where.
type Error struct {
	Component string
	Value     any
	Stack     []byte
}

func (e *Error) Error() string {
	return fmt.Sprintf("internal error in %s (recovered panic: %v); counted in %s", e.Component, e.Value, MetricName)
}

// Guard recovers the panics of one component. The zero of a nil *Guard
// still recovers (it neither logs nor counts): tests may pass nil.
type Guard struct {
	component string
	log       *slog.Logger
	count     prometheus.Counter
	// pause is the wait before Keep runs a loop again (so a loop that
	// panics at once cannot spin a core).
	pause time.Duration
}

// New returns the guard of component, its counter registered on reg
// (nil: not registered). Each component registers its own series of the
// one metric; a second guard of the same component on the same registry
// shares the first one's counter.
func New(reg prometheus.Registerer, log *slog.Logger, component string) *Guard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: MetricName,
		Help:        "Panics recovered in background work (a device poll, a loop iteration), by component; each one became that item's error instead of a crash.",
		ConstLabels: prometheus.Labels{"component": component}})
	if reg != nil {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				panic(err) // a programming error, as MustRegister
			}
			c = are.ExistingCollector.(prometheus.Counter)
		}
	}
	return &Guard{component: component, log: log, count: c, pause: time.Second}
}

// Do runs f and returns a panic in it as an *Error (nil when f returned),
// logged with its stack and counted.
func (g *Guard) Do(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = g.recovered(v)
		}
	}()
	f()
	return nil
}

// Keep runs loop until it returns normally: after a panic the loop is
// counted, logged and started again after a pause, so a goroutine's
// next iterations still run. loop must be safe to start again (its
// once-only cleanup, closing a done channel, belongs to the caller).
// stop, when not nil, ends Keep instead of a restart once closed.
func (g *Guard) Keep(stop <-chan struct{}, loop func()) {
	for {
		if g.Do(loop) == nil {
			return
		}
		pause := time.Second
		if g != nil {
			pause = g.pause
		}
		t := time.NewTimer(pause)
		select {
		case <-stop:
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Count returns the panics this guard recovered (tests).
func (g *Guard) Count() float64 {
	if g == nil {
		return 0
	}
	var m dto.Metric
	if err := g.count.Write(&m); err != nil || m.Counter == nil {
		return 0
	}
	return m.Counter.GetValue()
}

func (g *Guard) recovered(v any) error {
	e := &Error{Value: v, Stack: debug.Stack()}
	if g == nil {
		e.Component = "unknown"
		return e
	}
	e.Component = g.component
	g.count.Inc()
	g.log.Error("recovered panic", "component", g.component, "panic", fmt.Sprint(v), "stack", string(e.Stack))
	return e
}
