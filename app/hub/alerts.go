package hub

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"sync"
	"time"

	"netmon/alerting"
	"netmon/alerting/rules"
	"netmon/app/api"
	"netmon/app/live"
)

// buildAlerts builds the alert engine over the capture, the hub's and the
// agents' connection inventories and the store; the API applies saved
// configurations to it and the live feed carries its new events.
func (h *Hub) buildAlerts() {
	h.buildNotify()
	h.alerts = alerting.New(h.log.With("component", "alerting"), h.cfg.Alerts, alerting.Deps{
		Store:       h.db,
		Traffic:     alertTraffic{h},
		Inventories: &alertInventories{h: h, seqs: map[int64]evaluated{}},
		Ifaces:      ifaceRates{h},
		Firewalls:   h.devices,
		Settings: func(ctx context.Context) (alerting.Settings, error) {
			return api.LoadAlertSettings(ctx, h.db, h.vault)
		},
		Sink:    h.notifier,
		Names:   alertNames{h},
		Threats: iocMatcher{h.iocList},
		Rates:   alertRates{h},
	}, h.reg)
	h.parts.add("alerts", h.alerts.Start, noCtx(h.alerts.Stop))
}

// ifaceRates feeds the iface_util rule the agents' interfaces (the rates
// of each agent's last batch over the link speed it reported) and the
// device component's (devices.Component.IfaceRates).
type ifaceRates struct{ h *Hub }

// agentRateMaxAge leaves out agents whose last batch is older: its rates
// describe a past interval, not the link now (an agent reports every
// 30 s by default).
const agentRateMaxAge = 2 * time.Minute

// agentRate is the part of an agent's stored rates the rule reads.
type agentRate struct {
	Name      string  `json:"name"`
	RxBps     float64 `json:"rx_bps"`
	TxBps     float64 `json:"tx_bps"`
	SpeedMbps int64   `json:"speed_mbps"`
}

func (d ifaceRates) IfaceRates(ctx context.Context) ([]rules.IfaceRate, error) {
	out, err := d.h.devices.IfaceRates(ctx)
	if err != nil {
		return out, err
	}
	agents, err := d.h.db.ListAgents(ctx, "")
	if err != nil {
		return out, err
	}
	cutoff := time.Now().Add(-agentRateMaxAge).Unix()
	var rs []agentRate
	for _, ag := range agents {
		if ag.LastSeen < cutoff || ag.Rates == "" {
			continue
		}
		rs = rs[:0]
		if json.Unmarshal([]byte(ag.Rates), &rs) != nil {
			continue
		}
		for _, r := range rs {
			if r.SpeedMbps <= 0 {
				continue
			}
			// Rates are stored in bits per second already.
			out = append(out, rules.IfaceRate{AgentID: ag.ID, Site: ag.Site, Name: r.Name,
				SpeedBps: float64(r.SpeedMbps) * 1e6, InBps: r.RxBps, OutBps: r.TxBps})
		}
	}
	return out, nil
}

// alertTick hands the live feed the engine's new events.
type alertTick struct{ h *Hub }

func (a alertTick) NewAlertEvents() []live.AlertEvent {
	if a.h.alerts == nil {
		return nil
	}
	evs := a.h.alerts.Drain()
	out := make([]live.AlertEvent, len(evs))
	for i, e := range evs {
		out[i] = live.AlertEvent{ID: e.ID, TS: e.TS, Kind: e.Kind, Key: e.Key, Message: e.Message, Site: e.Site}
	}
	return out
}

// alertTraffic reads the capture's snapshot for the bw and target rules.
type alertTraffic struct{ h *Hub }

func (a alertTraffic) Traffic() rules.Traffic {
	s := a.h.capture.Snapshot()
	t := rules.Traffic{Running: s.Running, InBps: s.BpsIn, OutBps: s.BpsOut}
	for _, e := range s.TopEndpoints {
		if !e.Local {
			t.Endpoints = append(t.Endpoints, rules.Endpoint{IP: e.IP, Total: e.Total})
		}
	}
	return t
}

// alertInventories lists the established connections of the hub host
// (read again every cycle: each read is a new observation) and of each
// agent's batches not evaluated yet. An agent's batch is evaluated once:
// an agent reports every 30 s and the rules run every 5 s, and evaluating
// its last inventory again every cycle made a port event's count the
// number of cycles instead of the number of batches that showed the
// connection. Each cycle reads the seqs of the agents seen in the last
// inventoryMaxAge and parses only the inventories whose seq moved.
type alertInventories struct {
	h     *Hub
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

// inventoryMaxAge leaves out agents that stopped reporting: their last
// inventory is history, not a connection open now.
const inventoryMaxAge = 10 * time.Minute

// agentConn is the part of an agent's stored connection the rules read.
type agentConn struct {
	RemoteAddr string `json:"remote_addr"`
	Status     string `json:"status"`
	Process    string `json:"process"`
}

// nextInventory returns out grown by one inventory whose Conns reuse the backing
// array a previous cycle left there, so the steady state does not
// allocate per connection.
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

func (a *alertInventories) Inventories(ctx context.Context) ([]rules.Inventory, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seqs == nil {
		a.seqs = map[int64]evaluated{}
	}
	out := a.out[:0]
	defer func() { a.out = out }()
	if a.h.conns != nil {
		if cs, err := a.h.conns.Cached(ctx, 5*time.Second); err == nil {
			var inv *rules.Inventory
			out, inv = nextInventory(out)
			for _, c := range cs {
				inv.Conns = appendConn(inv.Conns, c.RemoteAddr, c.Status, c.Process, 0, "")
			}
		}
	}
	cutoff := time.Now().Add(-inventoryMaxAge).Unix()
	alive, err := a.h.db.AgentSeqs(ctx, cutoff)
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
	changed, err := a.h.db.AgentInventories(ctx, a.want)
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
			inv.Conns = appendConn(inv.Conns, c.RemoteAddr, c.Status, c.Process, ag.ID, ag.Site)
		}
	}
	return out, nil
}

// appendConn appends an established connection with a remote end.
func appendConn(out []rules.Conn, remote, status, process string, agent int64, site string) []rules.Conn {
	if status != "ESTABLISHED" {
		return out
	}
	host, port, err := net.SplitHostPort(remote)
	if err != nil {
		return out
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return out
	}
	return append(out, rules.Conn{AgentID: agent, Site: site, RemoteIP: host, RemotePort: uint16(p), Process: process})
}
