// Package fleet is the hub side of the agents (spec 2.9, 2.10, 3, 4.6):
// enroll tokens, the hello that enrolls an agent, agent identity (bearer
// token or client certificate), telemetry intake and the agent queries,
// and the archive of agents offline too long.
//
// It sits between the API (app/api calls it) and the store: telemetry is
// handed to the ingest record.Sink like every other producer's records,
// so a full queue answers 503 and the agent keeps the batch in its spool.
// The hub's CA (app/fleet/pki) signs client certificates when TLS is on.
package fleet

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/store"
	"netmon/store/record"
)

// Store is what the fleet needs of the database (*store.DB).
type Store interface {
	InTx(ctx context.Context, fn func(*store.Tx) error) error
	ListEnrollTokens(ctx context.Context, site string) ([]store.EnrollToken, error)
	AgentByTokenHash(ctx context.Context, hash string) (store.Agent, error)
	Agent(ctx context.Context, id int64) (store.Agent, error)
	ListAgents(ctx context.Context, site string) ([]store.Agent, error)
	AgentHistory(ctx context.Context, id, from int64) ([]store.AgentSample, error)
	SetAgentCert(ctx context.Context, id, notAfter int64) error
	OfflineAgents(ctx context.Context, before int64) ([]int64, error)
}

// Limiter is the failure throttle of enrollment (5 failures a minute per
// address, then a minute's block): the identity service's throttle.
type Limiter interface {
	// Begin reserves an attempt for key; ok is false when it is blocked.
	// done(true) records a success (which resets the key), done(false) a
	// failure.
	Begin(key string) (done func(success bool), ok bool)
}

// CA signs agent client certificates (*pki.Authority); nil when TLS is off.
type CA interface {
	SignClient(csrPEM string, agentID int64) (certPEM string, notAfter time.Time, err error)
	CAPEM() string
}

// Actor is who asks for an administrative change (from the API's identity).
type Actor struct {
	Username  string
	Role      string
	ActorType string
	// Site is the caller's site ("" = all sites).
	Site string
}

// Error is a refusal with its HTTP status, for the API to pass on.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func errorf(status int, format string, args ...any) error {
	return &Error{Status: status, Msg: fmt.Sprintf(format, args...)}
}

// ErrNoCA is returned by IssueCert when the hub runs without TLS.
var ErrNoCA = &Error{Status: http.StatusNotFound, Msg: "client certificates need the hub to run with -tls"}

// errUnknownAgent is the 401 of an agent route with a bad credential.
var errUnknownAgent = &Error{Status: http.StatusUnauthorized, Msg: "unknown agent: the token or certificate does not belong to an enrolled agent (re-enroll with an enroll token)"}

// Service is the fleet component.
type Service struct {
	log   *slog.Logger
	cfg   Config
	db    Store
	sink  record.Sink
	limit Limiter
	ca    CA
	m     *metrics

	mu      sync.Mutex
	agents  map[int64]*agentState  // intake state of agents seen since start
	tokens  map[string]cachedAgent // token hash -> agent, for tokenTTL
	tokenOf map[int64]string       // agent id -> its cached token hash

	stop chan struct{}
	wg   sync.WaitGroup
}

// New returns the fleet service; Start launches the archive loop.
func New(log *slog.Logger, cfg Config, db Store, sink record.Sink, limit Limiter, ca CA, reg prometheus.Registerer) *Service {
	d := DefaultConfig()
	if cfg.Interval <= 0 {
		cfg.Interval = d.Interval
	}
	if cfg.ArchiveEvery <= 0 {
		cfg.ArchiveEvery = d.ArchiveEvery
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{log: log, cfg: cfg, db: db, sink: sink, limit: limit, ca: ca, m: newMetrics(reg),
		agents: map[int64]*agentState{}, tokens: map[string]cachedAgent{}, tokenOf: map[int64]string{}, stop: make(chan struct{})}
}

// TLS reports whether client certificates can be issued.
func (s *Service) TLS() bool { return s.ca != nil }

// Start warms the intake's memory of the enrolled agents and launches the
// archive loop when enabled.
func (s *Service) Start() error {
	s.warm()
	if !s.cfg.Archive || s.cfg.ArchiveDays <= 0 {
		return nil
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.cfg.ArchiveEvery)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				if _, err := s.ArchiveOnce(ctx); err != nil {
					s.log.Error("agent archive failed", "error", err)
				}
				cancel()
			}
		}
	}()
	return nil
}

// warm loads every enrolled agent's token and last batch before the hub
// listens: after a restart a whole fleet's next batches would otherwise
// each resolve their token in the database within one interval (100 000
// agents: 3 300 extra queries a second for 30 s). One query instead; a
// failure only logs, the lookups then happen on demand.
func (s *Service) warm() {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	as, err := s.db.ListAgents(ctx, "")
	if err != nil {
		s.log.Warn("agent cache not warmed; tokens resolve on first use", "error", err)
		return
	}
	for _, a := range as {
		s.remember(a)
		s.cacheToken(a.TokenHash, a)
	}
	if len(as) > 0 {
		s.log.Info("agent cache warmed", "agents", len(as), "duration", time.Since(start).Round(time.Millisecond))
	}
}

// Stop ends the archive loop.
func (s *Service) Stop() error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	s.wg.Wait()
	return nil
}

// equalSecret compares two secrets in constant time (of their SHA-256, so
// the length of the configured secret does not leak either).
func equalSecret(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// hashToken is the stored form of an enroll or agent token: hex SHA-256.
// The tokens carry 256 random bits, so a fast hash is enough.
func hashToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// newToken returns prefix and 32 random bytes in hex.
func newToken(prefix string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// NewStaticToken returns a random static enroll secret for a hub started
// without -enroll-token.
func NewStaticToken() string { return newToken("") }

// storeErr maps store errors to API statuses where they mean something to
// the caller.
func storeErr(err error, what string) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusNotFound, "%s not found", what)
	case errors.Is(err, store.ErrConflict):
		return errorf(http.StatusConflict, "%s already exists", what)
	}
	return err
}
