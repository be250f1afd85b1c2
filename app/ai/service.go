package ai

import (
	"context"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/ai/provider"
	"netmon/app/netguard"
	"netmon/app/panics"
	"netmon/store"
)

// Store is what the service needs of the database (*store.DB).
type Store interface {
	InTx(ctx context.Context, fn func(*store.Tx) error) error
	AIProviders(ctx context.Context) ([]store.AIProvider, error)
	AIProvider(ctx context.Context, id int64) (store.AIProvider, error)
	AIConversation(ctx context.Context, site string, id int64) (store.AIConversation, error)
	AIConversations(ctx context.Context, f store.AIConversationFilter) ([]store.AIConversation, error)
	AIMessages(ctx context.Context, conversationID int64) ([]store.AIMessage, error)
	LatestAIAnalyses(ctx context.Context, site string, from, to int64, n int) ([]store.AIAnalysis, error)
	PruneAIConversations(ctx context.Context, archivedBefore int64) (int64, error)
}

// Sealer seals and opens provider keys (*vault.Vault).
type Sealer interface {
	Seal(plaintext, associatedData []byte) ([]byte, error)
	Open(blob, associatedData []byte) ([]byte, error)
}

// Auditor builds audit records (app/audit's Builder).
type Auditor interface {
	Event(ctx context.Context, who store.AuditActor, action, target, result, detail string, before, after any) store.AuditEvent
}

// The audit vocabulary of the assistant (spec 6.5).
const (
	ActionAnalyze        = "ai.analyze"
	ActionProviderCreate = "ai.provider.create"
	ActionProviderUpdate = "ai.provider.update"
	ActionProviderDelete = "ai.provider.delete"
)

// Deps are the service's collaborators.
type Deps struct {
	DB Store
	// Vault seals the providers' keys; nil: a provider with a key cannot
	// be stored and a stored key does not open.
	Vault Sealer
	// Facts builds a scope's context; nil: conversations carry no facts.
	Facts FactSource
	// Guard is the hub's outbound guard: a provider not found local at
	// registration connects only where it allows (global addresses, and
	// -outbound-allow ranges); nil is a zero guard (global only).
	Guard *netguard.Guard
	// LookupIP resolves a provider's host, at registration and at every
	// connection; nil is the system resolver. Tests swap it to change
	// what a name resolves to after registration.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	Auditor  Auditor
	Registry prometheus.Registerer
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// IsLeader says whether this hub prunes (the leader when several hubs
	// share a database); nil: always.
	IsLeader func() bool
}

// Service is the assistant.
type Service struct {
	log   *slog.Logger
	cfg   Config
	deps  Deps
	m     *metrics
	guard *panics.Guard

	streams chan struct{} // a slot per answer streaming

	mu      sync.Mutex
	clients map[int64]cachedClient
	// built holds contexts built ahead of the first turn (at creation,
	// at a preview), so the first message does not wait for the facts
	// and sends exactly what the preview showed.
	built map[int64]builtContext

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type cachedClient struct {
	updated int64
	client  provider.Client
}

// New builds the service; it does no work until Start.
func New(log *slog.Logger, cfg Config, deps Deps) *Service {
	def := DefaultConfig()
	if cfg.MaxContextKB <= 0 {
		cfg.MaxContextKB = def.MaxContextKB
	}
	if cfg.ConversationRetention <= 0 {
		cfg.ConversationRetention = def.ConversationRetention
	}
	if cfg.PruneInterval <= 0 {
		cfg.PruneInterval = def.PruneInterval
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = def.MaxStreams
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = def.MaxTurns
	}
	if cfg.LLMKind == "" {
		cfg.LLMKind = def.LLMKind
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Guard == nil {
		deps.Guard = netguard.New(netguard.Config{})
	}
	if deps.Auditor == nil {
		deps.Auditor = plainAuditor{now: deps.Now}
	}
	if deps.IsLeader == nil {
		deps.IsLeader = func() bool { return true }
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{log: log, cfg: cfg, deps: deps, m: newMetrics(deps.Registry), guard: panics.New(deps.Registry, log, "ai"),
		streams: make(chan struct{}, cfg.MaxStreams), clients: map[int64]cachedClient{}, built: map[int64]builtContext{}}
}

// Enabled reports -ai.
func (s *Service) Enabled() bool { return s != nil && s.cfg.Enabled }

// Start seeds the bootstrap provider (once, into an empty table) and
// starts the prune of archived conversations. Off (-ai unset), it does
// nothing.
func (s *Service) Start() error {
	if !s.cfg.Enabled {
		return nil
	}
	if err := s.seed(context.Background()); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(s.cfg.PruneInterval)
		defer t.Stop()
		for {
			_ = s.guard.Do(func() { s.prune(ctx) })
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// Stop ends the prune loop; answers streaming end with their clients.
func (s *Service) Stop() error {
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	return nil
}

// prune deletes the conversations archived longer than the retention.
func (s *Service) prune(ctx context.Context) {
	if !s.deps.IsLeader() {
		return
	}
	before := s.deps.Now().Add(-s.cfg.ConversationRetention).Unix()
	n, err := s.deps.DB.PruneAIConversations(ctx, before)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("prune AI conversations", "err", err)
		}
		return
	}
	if n > 0 {
		s.m.pruned.Add(float64(n))
		s.log.Info("pruned archived AI conversations", "count", n)
	}
}

// Prune runs one prune now (tests, the admin's maintenance).
func (s *Service) Prune(ctx context.Context) { s.prune(ctx) }

type plainAuditor struct{ now func() time.Time }

func (p plainAuditor) Event(_ context.Context, who store.AuditActor, action, target, result, detail string, _, _ any) store.AuditEvent {
	return store.AuditEvent{TS: p.now().Unix(), Username: who.Username, ActorType: who.ActorType, Action: action,
		Target: target, Result: result, Detail: detail}
}

type metrics struct {
	answers    *prometheus.CounterVec
	tokens     *prometheus.CounterVec
	streaming  prometheus.Gauge
	firstDelta prometheus.Histogram
	pruned     prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_ai_answers_total",
			Help: "AI answers by result: ok, error (the provider failed), partial (cut short: client gone, token limit)."}, []string{"result"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "netmon_ai_tokens_total",
			Help: "Tokens counted by the providers, by direction (in: prompt, out: answer)."}, []string{"direction"}),
		streaming: prometheus.NewGauge(prometheus.GaugeOpts{Name: "netmon_ai_streams",
			Help: "AI answers streaming now."}),
		firstDelta: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "netmon_ai_first_delta_seconds",
			Help:    "Time from a message's POST to its first text fragment forwarded to the client.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}}),
		pruned: prometheus.NewCounter(prometheus.CounterOpts{Name: "netmon_ai_conversations_pruned_total",
			Help: "Archived AI conversations deleted after the retention (90 days)."}),
	}
	if reg != nil {
		reg.MustRegister(m.answers, m.tokens, m.streaming, m.firstDelta, m.pruned)
	}
	return m
}
