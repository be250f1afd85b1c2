// Package compliance is the compliance log (spec 1 capability 8, issue
// 21): the access records a traffic-logging law asks a provider to keep
// (flow records, DNS queries, syslog lines) appended to a hash chain,
// checkpointed every hour by a signed RFC 6962 tree head, sealed every day
// with a signature and an RFC 3161 timestamp, copied to a WORM directory,
// and handed to auditors as evidence bundles that `netmon compliance
// verify` checks offline.
//
// One goroutine (the writer) owns the chain: it takes records from a
// bounded queue fed by the Tee sink, numbers, encodes and hashes them,
// writes them in batches, and makes the statements when an hour or a day
// ends. The chain's state is rebuilt from the database at Start, so a
// kill -9 loses only what was queued, never the chain's integrity.
package compliance

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
	"netmon/store"
)

// Store is what the service needs of the database.
type Store interface {
	AppendCompliance(ctx context.Context, rs []store.ComplianceRecord) (int, error)
	ComplianceHead(ctx context.Context) (store.ComplianceRecord, error)
	ComplianceCount(ctx context.Context) (int64, error)
	ScanCompliance(ctx context.Context, from, to uint64, fn func(store.ComplianceRecord) error) error
	ComplianceSeqRange(ctx context.Context, fromAt, toAt int64) (uint64, uint64, error)
	AddComplianceCheckpoint(ctx context.Context, c store.ComplianceCheckpoint) (int64, error)
	SetComplianceStamp(ctx context.Context, id int64, token []byte, status, worm string) error
	ListComplianceCheckpoints(ctx context.Context, kind string, fromPeriod, toPeriod int64) ([]store.ComplianceCheckpoint, error)
	LastComplianceCheckpoint(ctx context.Context, kind string) (store.ComplianceCheckpoint, error)
	PendingComplianceStamps(ctx context.Context) ([]store.ComplianceCheckpoint, error)
	PruneCompliance(ctx context.Context, before int64) (int64, error)
}

// Deps are the service's collaborators.
type Deps struct {
	DB       Store
	Registry prometheus.Registerer
	// OnDrift is called when a checkpoint's clock is ahead of the system
	// clock (the time_drift alert); nil ignores.
	OnDrift func(message string)
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// HTTPClient posts to the TSA. nil is a client with a 30 s timeout;
	// app/hub hands in one built on the guarded outbound dialer.
	HTTPClient *http.Client
}

// pending is one record waiting in the queue.
type pending struct {
	kind uint8
	ts   int64
	vals []string
}

// Service is the compliance log.
type Service struct {
	// guard keeps the writer and the stamper up (run).
	guard *panics.Guard
	log   *slog.Logger
	cfg   Config
	deps  Deps
	m     *metrics
	key   ed25519.PrivateKey

	queue  chan pending
	kick   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup

	c        *chain // owned by the writer goroutine
	drift    atomic.Bool
	wormErrs atomic.Int64
	lastWORM atomic.Value // string: last WORM error ("" none)
}

// New builds the service; it does no work until Start.
func New(log *slog.Logger, cfg Config, deps Deps) *Service {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.HTTPClient == nil {
		deps.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultConfig().Queue
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultConfig().Batch
	}
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultConfig().Tick
	}
	if cfg.StampRetry <= 0 {
		cfg.StampRetry = DefaultConfig().StampRetry
	}
	s := &Service{log: log, cfg: cfg, deps: deps, m: newMetrics(deps.Registry), guard: panics.New(deps.Registry, log, "compliance"),
		queue: make(chan pending, cfg.Queue), kick: make(chan struct{}, 1)}
	s.lastWORM.Store("")
	return s
}

// Enabled reports -compliance.
func (s *Service) Enabled() bool { return s.cfg.Enabled }

// PublicKey is the signing key's public half (nil before Start or when
// off). The private half never leaves this package (RELIABILITY 30).
func (s *Service) PublicKey() ed25519.PublicKey {
	if s.key == nil {
		return nil
	}
	return s.key.Public().(ed25519.PublicKey)
}

// Start loads (or creates) the key, rebuilds the chain's state from the
// database and starts the writer and the stamper. Off, it does nothing.
func (s *Service) Start() error {
	if !s.cfg.Enabled {
		return nil
	}
	key, err := LoadOrCreateKey(s.cfg.KeyFile)
	if err != nil {
		return err
	}
	s.key = key
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.c = &chain{s: s}
	if err := s.c.load(ctx); err != nil {
		cancel()
		return fmt.Errorf("load compliance chain: %w", err)
	}
	s.run(ctx)
	return nil
}

// run starts the writer and the stamper, each kept up by the guard: a
// panic is counted (netmon_panics_total{component="compliance"}) and
// the loop runs again; the writer first reads the chain's head back
// from the database, since its state in memory may be ahead of what
// was committed.
func (s *Service) run(ctx context.Context) {
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		restarted := false
		s.guard.Keep(nil, func() {
			if restarted {
				if err := s.c.load(context.WithoutCancel(ctx)); err != nil {
					s.log.Error("reload compliance chain after a panic", "err", err)
				}
			}
			restarted = true
			s.writer(ctx)
		})
	}()
	go func() {
		defer s.wg.Done()
		s.guard.Keep(ctx.Done(), func() { s.stamper(ctx) })
	}()
}

// Stop drains the queue into the chain and stops.
func (s *Service) Stop() error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	s.wg.Wait()
	s.cancel = nil
	return nil
}

// enqueue adds a record without blocking; false when the queue is full.
func (s *Service) enqueue(p pending) bool {
	select {
	case s.queue <- p:
		return true
	default:
		s.m.dropped.Inc()
		return false
	}
}

func (s *Service) writer(stop context.Context) {
	// Writes are not cancelled by Stop: what was taken from the queue is
	// committed (Stop drains the queue rather than dropping it).
	ctx := context.WithoutCancel(stop)
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	batch := make([]pending, 0, s.cfg.Batch)
	prune := time.Now()
	for {
		select {
		case <-stop.Done():
			// Drain what is queued: a clean stop loses nothing.
			for {
				select {
				case p := <-s.queue:
					batch = append(batch, p)
					if len(batch) == cap(batch) {
						s.c.append(context.Background(), batch)
						batch = batch[:0]
					}
					continue
				default:
				}
				break
			}
			if len(batch) > 0 {
				s.c.append(context.Background(), batch)
			}
			return
		case p := <-s.queue:
			batch = append(batch[:0], p)
			for len(batch) < cap(batch) {
				select {
				case p := <-s.queue:
					batch = append(batch, p)
					continue
				default:
				}
				break
			}
			s.c.append(ctx, batch)
			batch = batch[:0]
		case <-t.C:
			s.c.advance(ctx, s.deps.Now().Unix())
			if time.Since(prune) > time.Hour && s.cfg.RetentionDays > 0 {
				prune = time.Now()
				// Whole days only: a day's evidence must hold all of its
				// records or none, or its seal could not be verified.
				cut := s.deps.Now().Add(-time.Duration(s.cfg.RetentionDays) * 24 * time.Hour).Unix()
				cut -= cut % 86400
				if _, err := s.deps.DB.PruneCompliance(ctx, cut); err != nil {
					s.log.Warn("prune compliance log", "err", err)
				}
			}
		}
	}
}

// Flush chains everything queued so far and makes the statements of the
// hours that ended; for tests and benchmarks (the writer is stopped and
// restarted around it).
func (s *Service) Flush(ctx context.Context) {
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
	c, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.c.advance(c, s.deps.Now().Unix())
	s.run(c)
}

// OnDrift sets what is called when a checkpoint's clock is ahead of the
// system clock (Deps.OnDrift), for a consumer built after the log (the
// alert engine); call it before Start.
func (s *Service) OnDrift(fn func(message string)) { s.deps.OnDrift = fn }

// checkDrift raises time_drift when a statement's clock is ahead.
func (s *Service) checkDrift(signed int64) {
	now := s.deps.Now()
	if time.Unix(signed, 0).Sub(now) > s.cfg.DriftTolerance {
		if !s.drift.Swap(true) && s.deps.OnDrift != nil {
			s.deps.OnDrift(fmt.Sprintf("compliance checkpoint signed at %s is ahead of the system clock %s", time.Unix(signed, 0).UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)))
		}
		return
	}
	s.drift.Store(false)
}

var errOff = errors.New("compliance logging is off")
