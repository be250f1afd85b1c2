package fleet

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"netmon/alerting/rules"
	"netmon/store"
	"netmon/store/record"
)

// The fleet feeds the alert engine over its own reads (alerting's
// InventorySource, IfaceSource and RateSource): the agents' connection
// inventories here, their interface rates and traffic series in
// alertrates.go.

// AlertStore is what those reads need of the database (*store.DB).
type AlertStore interface {
	ListAgents(ctx context.Context, site string) ([]store.Agent, error)
	AgentSeqs(ctx context.Context, since int64) ([]store.AgentSeq, error)
	AgentInventories(ctx context.Context, ids []int64) ([]store.AgentInventory, error)
	RateMinutes(ctx context.Context, agentID, from, to int64) ([]store.RateMinute, error)
	RateHours(ctx context.Context, agentID, from, to int64) ([]store.RateHour, error)
	DeepTop(ctx context.Context, agentID, from, to int64, n int) (procs, domains []string, err error)
	DeepMinutes(ctx context.Context, agentID, from, to int64, procs, domains []string) (map[string][]store.SeriesMinute, error)
}

// inventoryMaxAge leaves out agents that stopped reporting: their last
// inventory is history, not a connection open now.
const inventoryMaxAge = 10 * time.Minute

// Inventories returns the connection inventories of the agents' batches
// not evaluated yet. An agent's batch is evaluated once: an agent
// reports every 30 s and the rules run every 5 s, and evaluating its last
// inventory again every cycle made a port event's count the number of
// cycles instead of the number of batches that showed the connection.
// Each cycle reads the seqs of the agents seen in the last
// inventoryMaxAge and parses only the inventories whose seq moved. The
// alert engine is the one caller (the bookkeeping is its cycles').
func (s *Service) Inventories(ctx context.Context) ([]rules.Inventory, error) {
	return s.inv.inventories(ctx, s.alertDB, time.Now())
}

// inventories is the bookkeeping of Inventories.
type inventories struct {
	mu    sync.Mutex
	seqs  map[int64]evaluated // by agent id
	gen   uint64
	want  []int64
	conns []agentConn
	out   []rules.Inventory
}

// evaluated is the last batch of an agent the rules saw; gen is the cycle
// that last found the agent alive.
type evaluated struct {
	seq int64
	gen uint64
}

// agentConn is the part of an agent's stored connection the rules read.
type agentConn struct {
	RemoteAddr string `json:"remote_addr"`
	Status     string `json:"status"`
	Process    string `json:"process"`
}

// nextInventory returns out grown by one inventory whose Conns reuse the
// backing array a previous cycle left there, so the steady state does
// not allocate per connection.
func nextInventory(out []rules.Inventory) ([]rules.Inventory, *rules.Inventory) {
	if len(out) < cap(out) {
		out = out[:len(out)+1]
		inv := &out[len(out)-1]
		*inv = rules.Inventory{Conns: inv.Conns[:0]}
		return out, inv
	}
	out = append(out, rules.Inventory{})
	return out, &out[len(out)-1]
}

func (a *inventories) inventories(ctx context.Context, db AlertStore, now time.Time) ([]rules.Inventory, error) {
	if db == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seqs == nil {
		a.seqs = map[int64]evaluated{}
	}
	out := a.out[:0]
	defer func() { a.out = out }()
	alive, err := db.AgentSeqs(ctx, now.Add(-inventoryMaxAge).Unix())
	if err != nil {
		return out, err
	}
	a.gen++
	a.want = a.want[:0]
	for _, s := range alive {
		e, ok := a.seqs[s.ID]
		if !ok || e.seq != s.LastSeq {
			a.want = append(a.want, s.ID)
		}
		e.gen = a.gen
		a.seqs[s.ID] = e
	}
	// Agents gone quiet (or deleted) are forgotten: a batch after that
	// is evaluated as new.
	for id, e := range a.seqs {
		if e.gen != a.gen {
			delete(a.seqs, id)
		}
	}
	if len(a.want) == 0 {
		return out, nil
	}
	changed, err := db.AgentInventories(ctx, a.want)
	if err != nil {
		return out, err
	}
	for _, ag := range changed {
		e, ok := a.seqs[ag.ID]
		if !ok || e.seq == ag.LastSeq {
			continue
		}
		a.seqs[ag.ID] = evaluated{seq: ag.LastSeq, gen: a.gen}
		a.conns = a.conns[:0]
		if err := json.Unmarshal([]byte(ag.Connections), &a.conns); err != nil {
			continue
		}
		var inv *rules.Inventory
		out, inv = nextInventory(out)
		inv.AgentID, inv.Site = ag.ID, ag.Site
		for _, c := range a.conns {
			inv.Conns = record.AppendEstablished(inv.Conns, c.RemoteAddr, c.Status, c.Process, ag.ID, ag.Site)
		}
	}
	return out, nil
}
