package store_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/storetest"
)

// tcpProxy forwards a local port to PostgreSQL; down and up stand for the
// server stopping (every connection cut, the port refusing) and coming back
// on the same address.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func (p *tcpProxy) up() {
	p.t.Helper()
	addr := p.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		p.t.Fatalf("proxy listen: %v", err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestPostgresSurvivesRestart checks the promise of openPostgres: while the
// server is away Ping and queries fail within their deadline, and once it
// is back no dead pooled connection keeps failing.
func TestPostgresSurvivesRestart(t *testing.T) {
	u, err := url.Parse(storetest.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{t: t, target: u.Host}
	p.up()
	t.Cleanup(p.down)
	u.Host = p.addr
	db, err := store.Open(t.Context(), storetest.Logger(t), store.Config{DSN: u.String(), MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := t.Context()

	// Fill the pool with connections that the restart will kill.
	hammer := func(n int) error {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				for range n {
					if errs[i] = db.PutSetting(ctx, "k", "v"); errs[i] != nil {
						return
					}
					if _, errs[i] = db.GetSetting(ctx, "k"); errs[i] != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	if err := hammer(5); err != nil {
		t.Fatalf("before restart: %v", err)
	}
	if got := db.Reader().Stats().OpenConnections; got < 2 {
		t.Logf("only %d pooled connections before the restart", got)
	}

	p.down()
	for _, op := range []struct {
		desc string
		run  func(context.Context) error
	}{
		{"Ping", db.Ping},
		{"GetSetting", func(ctx context.Context) error { _, err := db.GetSetting(ctx, "k"); return err }},
	} {
		start := time.Now()
		opCtx, cancel := context.WithTimeout(ctx, time.Second)
		err := op.run(opCtx)
		cancel()
		if err == nil {
			t.Errorf("%s succeeded with the server down", op.desc)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s took %s with a 1s deadline", op.desc, d)
		}
	}
	if err := db.Ping(ctx); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Ping without deadline = %v, want a connection error", err)
	}

	// Let the dead connections idle past pgx's 1 s ping threshold, as
	// they would during any real restart.
	time.Sleep(1500 * time.Millisecond)
	p.up()
	if err := db.Ping(ctx); err != nil {
		t.Fatalf("first Ping after restart: %v", err)
	}
	if err := hammer(25); err != nil {
		t.Fatalf("after restart: %v", err)
	}

	// A restart shorter than that threshold: a query may hit a dead
	// connection without the ping, and fail, but each dead connection
	// fails at most once (pgx closes it and database/sql drops it).
	p.down()
	p.up()
	failures := 0
	for range 2 * 4 {
		if _, err := db.GetSetting(ctx, "k"); err != nil {
			failures++
			t.Logf("query after quick restart: %v", err)
		}
	}
	if failures > 4 {
		t.Errorf("%d queries failed after a quick restart, want at most one per pooled connection (4)", failures)
	}
	if err := hammer(25); err != nil {
		t.Fatalf("after quick restart: %v", err)
	}
}
