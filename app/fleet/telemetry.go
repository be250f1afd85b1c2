package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"netmon/agentmode/wire"
	"netmon/store"
	"netmon/store/record"
)

// AgentRef is an authenticated agent.
type AgentRef struct {
	ID   int64
	Name string
	Site string
}

// Authenticate resolves an agent route's caller (spec 5 item 10): the
// bearer agent token, or the agent id of a client certificate verified by
// the TLS handshake (certAgent, 0 when none). Both count the same; when
// both are given they must name the same agent. A deleted agent resolves
// to nothing, so its token and certificate stop working at once.
func (s *Service) Authenticate(ctx context.Context, bearer string, certAgent int64) (AgentRef, error) {
	var a store.Agent
	var err error
	switch {
	case bearer != "":
		if !strings.HasPrefix(bearer, AgentTokenPrefix) {
			return AgentRef{}, errUnknownAgent
		}
		hash := hashToken(bearer)
		if ref, ok := s.cachedToken(hash); ok {
			if certAgent != 0 && certAgent != ref.ID {
				s.log.Warn("agent credentials disagree", "token_agent", ref.ID, "cert_agent", certAgent)
				return AgentRef{}, errUnknownAgent
			}
			return ref, nil
		}
		a, err = s.db.AgentByTokenHash(ctx, hash)
		if err == nil && certAgent != 0 && certAgent != a.ID {
			s.log.Warn("agent credentials disagree", "token_agent", a.ID, "cert_agent", certAgent)
			return AgentRef{}, errUnknownAgent
		}
		if err == nil {
			s.cacheToken(hash, a)
		}
	case certAgent != 0:
		a, err = s.db.Agent(ctx, certAgent)
	default:
		return AgentRef{}, errUnknownAgent
	}
	if errors.Is(err, store.ErrNotFound) {
		return AgentRef{}, errUnknownAgent
	}
	if err != nil {
		return AgentRef{}, err
	}
	s.remember(a)
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
func (s *Service) cachedToken(hash string) (AgentRef, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.tokens[hash]
	if !ok || s.cfg.Now().After(c.until) {
		return AgentRef{}, false
	}
	if _, live := s.agents[c.ref.ID]; !live {
		return AgentRef{}, false
	}
	return c.ref, true
}

func (s *Service) cacheToken(hash string, a store.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[hash] = cachedAgent{ref: AgentRef{ID: a.ID, Name: a.Name, Site: a.Site}, until: s.cfg.Now().Add(tokenTTL)}
	s.tokenOf[a.ID] = hash
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
func (s *Service) remember(a store.Agent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.agents[a.ID]; ok {
		return
	}
	st := &agentState{seq: a.LastSeq, ts: a.LastSeen, counters: map[string]wire.Interface{}}
	var ifs []wire.Interface
	if json.Unmarshal([]byte(a.Counters), &ifs) == nil {
		for _, i := range ifs {
			st.counters[i.Name] = i
		}
	}
	s.agents[a.ID] = st
}

// forget drops the intake state of a deleted or replaced agent.
func (s *Service) forget(id int64) {
	if id == 0 {
		return
	}
	s.mu.Lock()
	delete(s.agents, id)
	if h, ok := s.tokenOf[id]; ok {
		delete(s.tokens, h)
		delete(s.tokenOf, id)
	}
	s.mu.Unlock()
}

// Limits of one batch; the body limit (wire.MaxTelemetryBytes) bounds the
// rest.
const (
	maxInterfaces  = 512
	maxConnections = 20000
	maxTextField   = 256
)

// Rate is one interface's rates in the agent list (spec 2.9 rates[]).
type Rate struct {
	Name      string  `json:"name"`
	RxBps     float64 `json:"rx_bps" doc:"bits per second received"`
	TxBps     float64 `json:"tx_bps" doc:"bits per second sent"`
	PPS       float64 `json:"pps" doc:"packets per second, both directions"`
	RxBytes   uint64  `json:"rx_bytes" doc:"cumulative counter as reported"`
	TxBytes   uint64  `json:"tx_bytes"`
	RxPackets uint64  `json:"rx_packets"`
	TxPackets uint64  `json:"tx_packets"`
}

// Telemetry takes one batch (spec 4.6): the ts is clamped, a batch whose
// seq was already taken is acknowledged and ignored, rates are computed
// from the previous batch's counters, and the result is queued for the
// store. A full queue gives 503, and the agent keeps the batch.
func (s *Service) Telemetry(ctx context.Context, agent AgentRef, ip netip.Addr, t Batch) (wire.TelemetryResponse, error) {
	pcap := s.cfg.PcapEnabled // the policy reaches enrolled agents here
	resp := wire.TelemetryResponse{OK: true, Interval: int(s.cfg.Interval / 1e9), PcapEnabled: &pcap}
	if len(t.Interfaces) > maxInterfaces || t.Connections.Len() > maxConnections {
		s.m.batches.WithLabelValues("invalid").Inc()
		return wire.TelemetryResponse{}, errorf(http.StatusRequestEntityTooLarge, "a batch carries at most %d interfaces and %d connections", maxInterfaces, maxConnections)
	}
	now := s.cfg.Now().Unix()
	if t.TS < now-7*86400 || t.TS > now+86400 {
		t.TS = now
	}
	s.mu.Lock()
	st := s.agents[agent.ID]
	s.mu.Unlock()
	if st == nil {
		// Authenticate remembers every agent; only a delete in between
		// gets here.
		return wire.TelemetryResponse{}, errUnknownAgent
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	seq := t.Seq
	if seq == 0 {
		seq = st.seq + 1
	}
	if seq <= st.seq {
		s.m.batches.WithLabelValues("duplicate").Inc()
		return resp, nil
	}
	rec := record.Telemetry{AgentID: agent.ID, Seq: seq, TS: t.TS, RemoteIP: ip.String(), Version: clip(t.Version, 64),
		AttrMethod: attrMethod(t.AttrMethod), AttrIface: clip(t.AttrIface, maxTextField), AttrNote: clip(t.AttrNote, 1024),
		Dropped: t.Dropped, Conns: t.Connections.Len(), Connections: t.Connections.JSON()}
	if err := s.takeDeep(agent.ID, seq, &t); err != nil {
		return wire.TelemetryResponse{}, err
	}
	rates, counters, deltas := s.rates(st, &t, &rec)
	rec.Rates, _ = json.Marshal(rates)
	rec.Counters, _ = json.Marshal(t.Interfaces)
	if !s.sink.PutTelemetry([]record.Telemetry{rec}) {
		s.m.batches.WithLabelValues("queue_full").Inc()
		return wire.TelemetryResponse{}, errorf(http.StatusServiceUnavailable, "the hub's ingest queue is full; keep the batch and retry later")
	}
	st.seq, st.ts, st.counters = seq, t.TS, counters
	s.m.batches.WithLabelValues("queued").Inc()
	for _, d := range deltas {
		s.m.traffic(agent.Name, d.name, d.rx, d.tx, d.rxp, d.txp)
	}
	if t.Dropped > 0 {
		s.m.agentDrop.Add(float64(t.Dropped))
		s.log.Warn("agent discarded telemetry batches", "agent_id", agent.ID, "dropped", t.Dropped)
	}
	return resp, nil
}

// maxByteRate bounds a plausible interface rate (bytes/s, 800 Gbit/s): a
// larger delta is a counter reset or a misreport, not traffic.
const maxByteRate = 100e9

// rates computes per-interface rates between the previous batch and t,
// and the summed in/out/local/pps of the history sample. Counters are
// cumulative: a counter that went down from the upper half of the 32-bit
// range wrapped; any other fall is a reset (reboot, driver reload), which
// yields no rate for that interval rather than a negative or absurd one.
func (s *Service) rates(st *agentState, t *Batch, rec *record.Telemetry) ([]Rate, map[string]wire.Interface, []ifDelta) {
	counters := make(map[string]wire.Interface, len(t.Interfaces))
	out := make([]Rate, 0, len(t.Interfaces))
	var deltas []ifDelta
	dt := float64(t.TS - st.ts)
	usable := st.ts > 0 && dt > 0 && dt <= 7*86400
	for i := range t.Interfaces {
		cur := t.Interfaces[i]
		cur.Name = clip(cur.Name, 64)
		t.Interfaces[i].Name = cur.Name
		counters[cur.Name] = cur
		r := Rate{Name: cur.Name, RxBytes: cur.RxBytes, TxBytes: cur.TxBytes, RxPackets: cur.RxPackets, TxPackets: cur.TxPackets}
		prev, seen := st.counters[cur.Name]
		if usable && seen {
			// Each counter is judged alone: one that reset gives no rate,
			// the others still do.
			loop := isLoopback(cur.Name)
			d := ifDelta{name: cur.Name}
			if rx, ok := delta(cur.RxBytes, prev.RxBytes); ok && float64(rx)/dt <= maxByteRate {
				d.rx = rx
				r.RxBps = float64(rx) * 8 / dt
				if loop {
					rec.Local += float64(rx) / dt
				} else {
					rec.In += float64(rx) / dt
				}
				rec.HasRates = true
			}
			if tx, ok := delta(cur.TxBytes, prev.TxBytes); ok && float64(tx)/dt <= maxByteRate {
				d.tx = tx
				r.TxBps = float64(tx) * 8 / dt
				if !loop {
					rec.Out += float64(tx) / dt
				}
				rec.HasRates = true
			}
			rp, ok1 := delta(cur.RxPackets, prev.RxPackets)
			tp, ok2 := delta(cur.TxPackets, prev.TxPackets)
			if ok1 && ok2 && float64(rp+tp)/dt <= maxByteRate/64 {
				d.rxp, d.txp = rp, tp
				r.PPS = float64(rp+tp) / dt
				if !loop {
					rec.PPS += r.PPS
				}
			}
			deltas = append(deltas, d)
		}
		out = append(out, r)
	}
	return out, counters, deltas
}

// ifDelta is what one interface's counters moved since the last batch
// (0 for a counter that reset).
type ifDelta struct {
	name             string
	rx, tx, rxp, txp uint64
}

// delta is cur-prev for a cumulative counter; ok is false on a reset.
func delta(cur, prev uint64) (uint64, bool) {
	if cur >= prev {
		return cur - prev, true
	}
	// A 32-bit counter wraps from its upper half; a fall from lower down
	// (or of a 64-bit value) is a reset.
	if prev >= 1<<31 && prev < 1<<32 && cur < 1<<32 {
		return (1<<32 - prev) + cur, true
	}
	return 0, false
}

// isLoopback recognises the loopback interface names of Linux (lo),
// macOS/BSD (lo0) and Windows ("Loopback Pseudo-Interface 1").
func isLoopback(name string) bool {
	if name == "lo" || strings.Contains(strings.ToLower(name), "loopback") {
		return true
	}
	if strings.HasPrefix(name, "lo") && len(name) > 2 {
		for _, c := range name[2:] {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
	return false
}

func attrMethod(m string) string {
	switch m {
	case "ebpf", "pcap", "etw", "off":
		return m
	}
	return "off"
}

// clip bounds a text field and makes it valid UTF-8.
func clip(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// IssueCert signs a renewed client certificate for agent (spec 4.6).
func (s *Service) IssueCert(ctx context.Context, agent AgentRef, csrPEM string) (wire.CertResponse, error) {
	if s.ca == nil {
		return wire.CertResponse{}, ErrNoCA
	}
	cert, notAfter, err := s.ca.SignClient(csrPEM, agent.ID)
	if err != nil {
		return wire.CertResponse{}, errorf(http.StatusBadRequest, "csr_pem: %v", err)
	}
	if err := s.db.SetAgentCert(ctx, agent.ID, notAfter.Unix()); err != nil {
		return wire.CertResponse{}, err
	}
	return wire.CertResponse{ClientCertPEM: cert, CACertPEM: s.ca.CAPEM()}, nil
}
