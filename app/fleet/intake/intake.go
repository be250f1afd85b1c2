// Package intake is the fleet's hot path: it resolves an agent route's
// caller (agent token or client certificate) and takes telemetry batches
// (spec 4.6) — their JSON scanner, the rates computed from cumulative
// counters, duplicate batches ignored — into the ingest record.Sink, so a
// full queue answers Unavailable and the agent keeps the batch.
//
// It is its own package because it is the one part of the fleet that
// runs for every batch of every agent (thousands a second): it keeps the
// agents' state and resolved tokens in memory, which enroll (a new agent)
// and agents (a deleted one) update through Enrolled and Forget. It
// imports the store for its entity types, the wire protocol, and the
// errs leaf; app/fleet composes it.
package intake

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/agentmode/wire"
	"netmon/app/errs"
	"netmon/app/secret"
	"netmon/store"
	"netmon/store/record"
)

// AgentTokenPrefix starts every agent token (agt_).
const AgentTokenPrefix = "agt_"

// Config configures the intake.
type Config struct {
	// Interval is the telemetry interval agents are told to use; every
	// batch's answer repeats it.
	Interval time.Duration
	// PcapEnabled is the -agent-pcap policy: without it the deep
	// collection sections of batches are not kept, and every answer
	// repeats it so that enrolled agents follow a change.
	PcapEnabled bool
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Store is what the intake reads of the database (*store.DB); batches
// are written through the sink.
type Store interface {
	AgentByTokenHash(ctx context.Context, hash string) (store.Agent, error)
	Agent(ctx context.Context, id int64) (store.Agent, error)
	ListAgents(ctx context.Context, site string) ([]store.Agent, error)
}

// AgentRef is an authenticated agent.
type AgentRef struct {
	ID   int64
	Name string
	Site string
}

// ErrUnknownAgent refuses an agent route with a credential that belongs
// to no enrolled agent.
var ErrUnknownAgent = errs.Unauthorizedf("unknown agent: the token or certificate does not belong to an enrolled agent (re-enroll with an enroll token)")

// Service authenticates agents and takes their telemetry.
type Service struct {
	log  *slog.Logger
	cfg  Config
	db   Store
	sink record.Sink
	m    *metrics
	// spoolDropped is every batch agents reported discarding (SpoolDropped).
	spoolDropped atomic.Uint64

	mu      sync.Mutex
	agents  map[int64]*agentState  // intake state of agents seen since start
	tokens  map[string]cachedAgent // token hash -> agent, for tokenTTL
	tokenOf map[int64]string       // agent id -> its cached token hash
}

// New returns the intake; it does no I/O (Warm loads the agents).
func New(log *slog.Logger, cfg Config, db Store, sink record.Sink) *Service {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{log: log, cfg: cfg, db: db, sink: sink, m: newMetrics(),
		agents: map[int64]*agentState{}, tokens: map[string]cachedAgent{}, tokenOf: map[int64]string{}}
}

// Collectors returns the intake's metrics, for the fleet to register.
func (in *Service) Collectors() []prometheus.Collector { return in.m.collectors() }

// Warm loads every enrolled agent's token and last batch before the hub
// listens: after a restart a whole fleet's next batches would otherwise
// each resolve their token in the database within one interval (100 000
// agents: 3 300 extra queries a second for 30 s). One query instead; a
// failure only logs, the lookups then happen on demand.
func (in *Service) Warm(ctx context.Context) {
	start := time.Now()
	as, err := in.db.ListAgents(ctx, "")
	if err != nil {
		in.log.Warn("agent cache not warmed; tokens resolve on first use", "error", err)
		return
	}
	for _, a := range as {
		in.remember(a)
		in.cacheToken(a.TokenHash, a)
	}
	if len(as) > 0 {
		in.log.Info("agent cache warmed", "agents", len(as), "duration", time.Since(start).Round(time.Millisecond))
	}
}

// Enrolled takes a newly enrolled agent and forgets the one it replaced
// (0: none). The agent's first batch follows within an interval:
// resolving its token from the database then would cost a query per
// agent (a fifth of the intake's CPU while a fleet rolls out).
func (in *Service) Enrolled(a store.Agent, replaced int64) {
	in.Forget(replaced)
	in.remember(a)
	in.cacheToken(a.TokenHash, a)
}

// Authenticate resolves an agent route's caller (spec 5 item 10): the
// bearer agent token, or the agent id of a client certificate verified by
// the TLS handshake (certAgent, 0 when none). Both count the same; when
// both are given they must name the same agent. A deleted agent resolves
// to nothing, so its token and certificate stop working at once.
func (in *Service) Authenticate(ctx context.Context, bearer string, certAgent int64) (AgentRef, error) {
	var a store.Agent
	var err error
	switch {
	case bearer != "":
		if !strings.HasPrefix(bearer, AgentTokenPrefix) {
			return AgentRef{}, ErrUnknownAgent
		}
		hash := secret.Hash(bearer)
		if ref, ok := in.cachedToken(hash); ok {
			if certAgent != 0 && certAgent != ref.ID {
				in.log.Warn("agent credentials disagree", "token_agent", ref.ID, "cert_agent", certAgent)
				return AgentRef{}, ErrUnknownAgent
			}
			return ref, nil
		}
		a, err = in.db.AgentByTokenHash(ctx, hash)
		if err == nil && certAgent != 0 && certAgent != a.ID {
			in.log.Warn("agent credentials disagree", "token_agent", a.ID, "cert_agent", certAgent)
			return AgentRef{}, ErrUnknownAgent
		}
		if err == nil {
			in.cacheToken(hash, a)
		}
	case certAgent != 0:
		a, err = in.db.Agent(ctx, certAgent)
	default:
		return AgentRef{}, ErrUnknownAgent
	}
	if errors.Is(err, store.ErrNotFound) {
		return AgentRef{}, ErrUnknownAgent
	}
	if err != nil {
		return AgentRef{}, err
	}
	in.remember(a)
	return AgentRef{ID: a.ID, Name: a.Name, Site: a.Site}, nil
}

// tokenTTL bounds how long a resolved agent token is trusted without the
// database. It must be well above the telemetry interval, or every batch
// would miss. This hub forgets a deleted or replaced agent at once;
// another hub sharing the database may accept its token for up to
// tokenTTL, and the batches it takes then are dropped by the store (the
// agent is gone).
const tokenTTL = 10 * time.Minute

type cachedAgent struct {
	ref   AgentRef
	until time.Time
}

// cachedToken returns the agent a token hash resolved to recently. The
// lookup it saves was a fifth of the cost of a telemetry batch.
func (in *Service) cachedToken(hash string) (AgentRef, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	c, ok := in.tokens[hash]
	if !ok || in.cfg.Now().After(c.until) {
		return AgentRef{}, false
	}
	if _, live := in.agents[c.ref.ID]; !live {
		return AgentRef{}, false
	}
	return c.ref, true
}

func (in *Service) cacheToken(hash string, a store.Agent) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.tokens[hash] = cachedAgent{ref: AgentRef{ID: a.ID, Name: a.Name, Site: a.Site}, until: in.cfg.Now().Add(tokenTTL)}
	in.tokenOf[a.ID] = hash
}

// agentState is the intake's memory of an agent: the last accepted batch,
// for rates and for ignoring repeated batches.
type agentState struct {
	mu       sync.Mutex // one batch of an agent at a time
	seq      uint64
	ts       int64
	counters map[string]wire.Interface
}

// remember loads an agent's state from its row the first time the intake
// sees it after a start, so rates and duplicate detection continue across
// hub restarts.
func (in *Service) remember(a store.Agent) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if _, ok := in.agents[a.ID]; ok {
		return
	}
	st := &agentState{seq: a.LastSeq, ts: a.LastSeen, counters: map[string]wire.Interface{}}
	var ifs []wire.Interface
	if json.Unmarshal([]byte(a.Counters), &ifs) == nil {
		for _, i := range ifs {
			st.counters[i.Name] = i
		}
	}
	in.agents[a.ID] = st
}

// Forget drops the state of a deleted or replaced agent (0: none), so its
// token stops resolving from memory.
func (in *Service) Forget(id int64) {
	if id == 0 {
		return
	}
	in.mu.Lock()
	delete(in.agents, id)
	if h, ok := in.tokenOf[id]; ok {
		delete(in.tokens, h)
		delete(in.tokenOf, id)
	}
	in.mu.Unlock()
}

// Limits of one batch; the body limit (wire.MaxTelemetryBytes) bounds the
// rest.
const (
	maxInterfaces  = wire.MaxInterfaces
	maxConnections = wire.MaxConnections
	maxTextField   = 256
)

// Telemetry takes one batch (spec 4.6): the ts is clamped, a batch whose
// seq was already taken is acknowledged and ignored, rates are computed
// from the previous batch's counters, and the result is queued for the
// store. A full queue is Unavailable, and the agent keeps the batch.
func (in *Service) Telemetry(ctx context.Context, agent AgentRef, ip netip.Addr, t Batch) (wire.TelemetryResponse, error) {
	pcap := in.cfg.PcapEnabled
	resp := wire.TelemetryResponse{OK: true, Interval: int(in.cfg.Interval / time.Second), PcapEnabled: &pcap}
	if len(t.Interfaces) > maxInterfaces || t.Connections.Len() > maxConnections {
		in.m.batches.WithLabelValues("invalid").Inc()
		return wire.TelemetryResponse{}, tooManyConns()
	}
	cleanAddrs(t.Interfaces)
	now := in.cfg.Now().Unix()
	if t.TS < now-7*86400 || t.TS > now+86400 {
		t.TS = now
	}
	in.mu.Lock()
	st := in.agents[agent.ID]
	in.mu.Unlock()
	if st == nil {
		// Authenticate remembers every agent; only a delete in between
		// gets here.
		return wire.TelemetryResponse{}, ErrUnknownAgent
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	seq := t.Seq
	if seq == 0 {
		seq = st.seq + 1
	}
	if seq <= st.seq {
		in.m.batches.WithLabelValues("duplicate").Inc()
		return resp, nil
	}
	rec := record.Telemetry{AgentID: agent.ID, Seq: seq, TS: t.TS, RemoteIP: ip.String(), Version: clip(t.Version, 64),
		AttrMethod: attrMethod(t.AttrMethod), AttrIface: clip(t.AttrIface, maxTextField), AttrNote: clip(t.AttrNote, 1024),
		Dropped: t.Dropped, Conns: t.Connections.Len(), Connections: t.Connections.JSON()}
	if err := in.takeDeep(agent.ID, seq, &t); err != nil {
		return wire.TelemetryResponse{}, err
	}
	rates, counters, deltas := rates(st, &t, &rec)
	rec.Rates, _ = json.Marshal(rates)
	rec.Counters, _ = json.Marshal(t.Interfaces)
	if !in.sink.PutTelemetry([]record.Telemetry{rec}) {
		in.m.batches.WithLabelValues("queue_full").Inc()
		return wire.TelemetryResponse{}, errQueueFull
	}
	st.seq, st.ts, st.counters = seq, t.TS, counters
	in.m.batches.WithLabelValues("queued").Inc()
	for _, d := range deltas {
		in.m.traffic(agent.Name, d.name, d.rx, d.tx, d.rxp, d.txp)
	}
	if t.Dropped > 0 {
		in.m.agentDrop.Add(float64(t.Dropped))
		in.spoolDropped.Add(t.Dropped)
		in.log.Warn("agent discarded telemetry batches", "agent_id", agent.ID, "dropped", t.Dropped)
	}
	return resp, nil
}

// errQueueFull answers a batch the ingest queue cannot take: the agent
// keeps it in its spool and retries.
var errQueueFull = errs.Unavailablef(0, "the hub's ingest queue is full; keep the batch and retry later")

// cleanAddrs keeps of each interface's addresses (wire.Interface.Addrs)
// at most wire.MaxAddrs valid prefixes, in canonical form: they are
// stored with the counters and read by the topology.
func cleanAddrs(ifs []wire.Interface) {
	for i := range ifs {
		in := ifs[i].Addrs
		if len(in) == 0 {
			continue
		}
		out := in[:0]
		for _, a := range in {
			if len(out) >= wire.MaxAddrs {
				break
			}
			if p, err := netip.ParsePrefix(a); err == nil {
				out = append(out, p.String())
			}
		}
		if len(out) == 0 {
			out = nil
		}
		ifs[i].Addrs = out
	}
}

// SpoolDropped returns the telemetry batches agents reported discarding
// from their full offline queue since start.
func (in *Service) SpoolDropped() uint64 { return in.spoolDropped.Load() }
