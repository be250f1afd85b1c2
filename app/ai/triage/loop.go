package triage

import (
	"context"
	"errors"
	"sync"
	"time"

	"netmon/app/panics"
)

// loop runs a pass now and then every tick until stopped, each pass on a
// context that Stop cancels, a panic in a pass recovered and counted by
// the guard: the shape of Triage and Nightly alike.
type loop struct {
	mu         sync.Mutex
	stop, done chan struct{}
}

// start starts the loop; a second start without a stop is an error.
func (l *loop) start(guard *panics.Guard, tick time.Duration, pass func(ctx context.Context)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		return errors.New("already started")
	}
	stop, done := make(chan struct{}), make(chan struct{})
	l.stop, l.done = stop, done
	go func() {
		defer close(done)
		guard.Keep(stop, func() { run(stop, tick, pass) })
	}()
	return nil
}

func run(stop <-chan struct{}, tick time.Duration, pass func(ctx context.Context)) {
	tk := time.NewTicker(tick)
	defer tk.Stop()
	for {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		pass(ctx)
		cancel()
		select {
		case <-stop:
			return
		case <-tk.C:
		}
	}
}

// halt stops the loop and waits for a pass in progress (its context
// cancelled); safe when not started.
func (l *loop) halt() {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop, l.done = nil, nil
	l.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
}
