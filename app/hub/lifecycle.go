package hub

import (
	"context"
	"errors"
	"fmt"
)

// part is one component as the hub runs it: started in the order parts
// were added, stopped in exactly the reverse order.
type part struct {
	name  string
	start func() error
	stop  func(ctx context.Context) error
	// up: started (or, for what New opens itself — the listener, the
	// database — open since it was added), so Stop must stop it.
	up bool
}

// parts is the hub's components in dependency order.
type parts struct {
	list []*part
	// trace records "start x" and "stop x" as they happen (tests).
	trace []string
}

// opened adds a part New has already opened (no start): it is stopped
// even if Start never runs.
func (p *parts) opened(name string, stop func(context.Context) error) {
	p.list = append(p.list, &part{name: name, stop: stop, up: true})
}

// add adds a part that Start starts.
func (p *parts) add(name string, start func() error, stop func(context.Context) error) {
	p.list = append(p.list, &part{name: name, start: start, stop: stop})
}

// startAll starts the parts not yet up, in order, and stops at the first
// failure (the caller stops what is up).
func (p *parts) startAll() error {
	for _, x := range p.list {
		if x.up {
			continue
		}
		p.trace = append(p.trace, "start "+x.name)
		if err := x.start(); err != nil {
			return fmt.Errorf("start %s: %w", x.name, err)
		}
		x.up = true
	}
	return nil
}

// stopAll stops every part that is up, in reverse order, and returns the
// errors joined.
func (p *parts) stopAll(ctx context.Context) error {
	var errs []error
	for i := len(p.list) - 1; i >= 0; i-- {
		x := p.list[i]
		if !x.up {
			continue
		}
		x.up = false
		p.trace = append(p.trace, "stop "+x.name)
		if err := x.stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", x.name, err))
		}
	}
	return errors.Join(errs...)
}

// noCtx adapts a component's Stop() to a part's stop.
func noCtx(stop func() error) func(context.Context) error {
	return func(context.Context) error { return stop() }
}
