package service

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	ks "github.com/kardianos/service"
)

// stopTimeout bounds how long a stop request waits for the agent to write
// its in-memory batches to the offline queue.
const stopTimeout = 20 * time.Second

// Run runs the agent. Started by the service control manager, the process
// must answer the manager's protocol (a plain process is killed after
// 30 s): the library does that and turns a stop request into cancelling
// the agent's context. Started from a console it just runs.
func Run(ctx context.Context, name string, run func(context.Context) error) error {
	if ks.Interactive() {
		return run(ctx)
	}
	p := &program{parent: ctx, run: run}
	s, err := ks.New(p, &ks.Config{Name: name})
	if err != nil {
		return fmt.Errorf("service manager: %w", err)
	}
	if err := s.Run(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

type program struct {
	parent context.Context
	run    func(context.Context) error

	mu       sync.Mutex
	cancel   context.CancelFunc
	done     chan struct{}
	err      error
	stopping bool
}

func (p *program) Start(ks.Service) error {
	ctx, cancel := context.WithCancel(p.parent)
	p.mu.Lock()
	p.cancel, p.done = cancel, make(chan struct{})
	p.mu.Unlock()
	go func() {
		err := p.run(ctx)
		p.mu.Lock()
		p.err = err
		stopping := p.stopping
		p.mu.Unlock()
		close(p.done)
		if !stopping {
			// The agent ended on its own (a fatal error): exit non-zero
			// so the manager's failure action restarts it.
			fmt.Fprintln(os.Stderr, "netmon agent stopped:", err)
			os.Exit(1)
		}
	}()
	return nil
}

func (p *program) Stop(ks.Service) error {
	p.mu.Lock()
	p.stopping = true
	cancel, done := p.cancel, p.done
	p.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
	case <-time.After(stopTimeout):
	}
	return nil
}
