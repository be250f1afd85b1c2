// Package topology builds the network graph of GET /api/v1/topology
// (spec 2.12) from the stored edges: LLDP and CDP neighbours the device
// pollers read (confidence discovered), ARP entries matching a device's
// or an agent's address (inferred), and uplinks set by hand (manual). It
// also expires edges unseen for 24 hours (spec 8).
//
// Element fields (the spec leaves them to us):
//   - devices[]: id ("device:<n>", or "neighbor:<name>" for a neighbour
//     that is not a configured device), device_id (0 for a neighbour),
//     name, kind, site, host, sys_name, managed (polled: has a host),
//     status (up: last poll fine; error: last poll failed; unknown: not
//     polled yet or not managed), last_error.
//   - agents[]: id ("agent:<n>"), agent_id, name, site, address, online
//     (telemetry within the last 3 minutes).
//   - links[]: id, source and target (element ids), source_port,
//     target_port, kind (lldp, cdp, arp, subnet, manual), confidence (discovered,
//     inferred, manual), status (normal < 70%, warning >= 70%, critical
//     >= 90% of the busier direction of either end's port; down when a
//     port is oper-down; unknown without utilisation), util_pct, ts
//     (last seen).
package topology

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"netmon/app/panics"
	"netmon/store"
)

// EdgeTTL is how long an edge unseen stays (spec 8).
const EdgeTTL = 24 * time.Hour

// Store is what the graph is read from (*store.DB).
type Store interface {
	Devices(ctx context.Context, site string) ([]store.Device, error)
	TopologyAgents(ctx context.Context, site string) ([]store.TopoAgent, error)
	TopologyEdges(ctx context.Context) ([]store.TopoEdge, error)
	PruneTopologyEdges(ctx context.Context, before int64) (int64, error)
}

// Topology is GET /api/v1/topology.
type Topology struct {
	GeneratedAt int64        `json:"generated_at"`
	Devices     []DeviceNode `json:"devices"`
	Agents      []AgentNode  `json:"agents"`
	Links       []Link       `json:"links"`
}

// DeviceNode is a device, or a neighbour a device reported.
type DeviceNode struct {
	ID        string `json:"id"`
	DeviceID  int64  `json:"device_id"`
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Site      string `json:"site"`
	Host      string `json:"host"`
	SysName   string `json:"sys_name"`
	Managed   bool   `json:"managed"`
	Status    string `json:"status" jsonschema:"enum=up,enum=error,enum=unknown"`
	LastError string `json:"last_error"`
}

// AgentNode is an agent.
type AgentNode struct {
	ID      string `json:"id"`
	AgentID int64  `json:"agent_id"`
	Name    string `json:"name"`
	Site    string `json:"site"`
	Address string `json:"address"`
	Online  bool   `json:"online"`
}

// Link is an edge between two elements.
type Link struct {
	ID         string   `json:"id"`
	Source     string   `json:"source"`
	Target     string   `json:"target"`
	SourcePort string   `json:"source_port"`
	TargetPort string   `json:"target_port"`
	Kind       string   `json:"kind" jsonschema:"enum=lldp,enum=cdp,enum=arp,enum=subnet,enum=manual"`
	Confidence string   `json:"confidence" jsonschema:"enum=discovered,enum=inferred,enum=manual"`
	Status     string   `json:"status" jsonschema:"enum=normal,enum=warning,enum=critical,enum=down,enum=unknown"`
	UtilPct    *float64 `json:"util_pct"`
	TS         int64    `json:"ts"`
}

// Status is a link's status from its utilisation (spec 3).
func Status(utilPct *float64, down bool) string {
	switch {
	case down:
		return "down"
	case utilPct == nil:
		return "unknown"
	case *utilPct >= 90:
		return "critical"
	case *utilPct >= 70:
		return "warning"
	}
	return "normal"
}

// Deps are what the service reads and reports to.
type Deps struct {
	// Store is the graph's rows (*store.DB).
	Store Store
	// Panics counts a panic of the expiry loop (nil still recovers,
	// uncounted).
	Panics *panics.Guard
}

// Service builds the graph and expires old edges.
type Service struct {
	cfg    Config
	panics *panics.Guard
	log    *slog.Logger
	db     Store
	now    func() time.Time
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns the service; it does no work.
func New(log *slog.Logger, cfg Config, deps Deps) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.PruneEvery <= 0 {
		cfg.PruneEvery = DefaultConfig().PruneEvery
	}
	return &Service{log: log, cfg: cfg, db: deps.Store, panics: deps.Panics, now: time.Now}
}

// Start runs the expiry loop.
func (s *Service) Start() error {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.cfg.PruneEvery)
		defer t.Stop()
		for {
			// A panic in one expiry run is counted; the next one runs.
			_ = s.panics.Do(func() {
				if n, err := s.db.PruneTopologyEdges(ctx, s.now().Add(-EdgeTTL).Unix()); err != nil && ctx.Err() == nil {
					s.log.Warn("expire topology edges", "error", err)
				} else if n > 0 {
					s.log.Info("expired topology edges", "edges", n)
				}
			})
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// Stop stops the loop.
func (s *Service) Stop() error {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	return nil
}

var rank = map[string]int{"inferred": 1, "discovered": 2, "manual": 3}

func confidence(source string) string {
	switch source {
	case "lldp", "cdp":
		return "discovered"
	case "manual":
		return "manual"
	}
	return "inferred"
}

// Build returns the graph a caller bound to site sees ("" = every site).
func (s *Service) Build(ctx context.Context, site string) (Topology, error) {
	now := s.now()
	devs, err := s.db.Devices(ctx, site)
	if err != nil {
		return Topology{}, err
	}
	agents, err := s.db.TopologyAgents(ctx, site)
	if err != nil {
		return Topology{}, err
	}
	edges, err := s.db.TopologyEdges(ctx)
	if err != nil {
		return Topology{}, err
	}
	t := Topology{GeneratedAt: now.Unix(), Devices: make([]DeviceNode, 0, len(devs)), Agents: make([]AgentNode, 0, len(agents)), Links: []Link{}}

	devByID := map[int64]*store.Device{}
	byName := map[string]string{} // lower-case name or sys_name -> element id
	byAddr := map[string]string{} // address -> element id
	for i := range devs {
		d := &devs[i]
		devByID[d.ID] = d
		id := "device:" + strconv.FormatInt(d.ID, 10)
		st := "unknown"
		switch {
		case d.LastPoll > 0 && d.LastError == "":
			st = "up"
		case d.LastError != "":
			st = "error"
		}
		t.Devices = append(t.Devices, DeviceNode{ID: id, DeviceID: d.ID, Name: d.Name, Kind: d.Kind, Site: d.Site, Host: d.Host,
			SysName: d.SysName, Managed: d.Host != "", Status: st, LastError: d.LastError})
		for _, n := range []string{d.Name, d.SysName} {
			if n != "" {
				byName[strings.ToLower(n)] = id
			}
		}
		if h := hostOnly(d.Host); h != "" {
			byAddr[h] = id
		}
	}
	agentIDs := map[int64]bool{}
	for _, a := range agents {
		id := "agent:" + strconv.FormatInt(a.ID, 10)
		agentIDs[a.ID] = true
		t.Agents = append(t.Agents, AgentNode{ID: id, AgentID: a.ID, Name: a.Name, Site: a.Site, Address: a.RemoteIP,
			Online: now.Unix()-a.LastSeen <= 180})
		if a.RemoteIP != "" {
			if _, taken := byAddr[a.RemoteIP]; !taken {
				byAddr[a.RemoteIP] = id
			}
		}
	}
	type portKey struct {
		dev  int64
		name string
	}
	type portState struct {
		util *float64
		down bool
	}
	// The state of each device port that has an edge, as its latest poll
	// wrote it into the edges.
	ports := map[portKey]portState{}
	for _, e := range edges {
		if e.AKind == "device" && e.APort != "" {
			ports[portKey{e.AID, e.APort}] = portState{e.UtilPct, e.PortDown}
		}
	}

	neighbors := map[string]bool{}
	links := map[[2]string]*Link{}
	cutoff := now.Add(-EdgeTTL).Unix()
	for _, e := range edges {
		if e.Source != "manual" && e.TS < cutoff {
			continue
		}
		var a string
		var aDev int64
		switch e.AKind {
		case "device":
			if devByID[e.AID] == nil {
				continue // another site's, or gone
			}
			a, aDev = "device:"+strconv.FormatInt(e.AID, 10), e.AID
		case "agent":
			if !agentIDs[e.AID] {
				continue
			}
			a = "agent:" + strconv.FormatInt(e.AID, 10)
		default:
			continue
		}
		var b string
		switch e.BKind {
		case "device":
			if devByID[e.BID] == nil {
				continue
			}
			b = "device:" + strconv.FormatInt(e.BID, 10)
		case "neighbor":
			if id, ok := byName[strings.ToLower(e.BName)]; ok && e.Source != "arp" {
				b = id
			} else if id, ok := byAddr[e.BAddr]; ok && e.BAddr != "" {
				b = id
			} else if e.Source == "arp" {
				continue // an address nobody here has: not drawn
			} else {
				b = "neighbor:" + e.BName
				if !neighbors[b] {
					neighbors[b] = true
					t.Devices = append(t.Devices, DeviceNode{ID: b, Name: e.BName, Kind: "unknown", Site: devByID[aDev].Site, Host: e.BAddr, SysName: e.BName, Status: "unknown"})
				}
			}
		default:
			continue
		}
		if a == b {
			continue
		}
		l := Link{Source: a, Target: b, SourcePort: e.APort, TargetPort: e.BPort, Kind: e.Source, Confidence: confidence(e.Source), TS: e.TS}
		var down bool
		var util *float64
		for _, end := range []struct {
			id   string
			port string
		}{{a, e.APort}, {b, e.BPort}} {
			if !strings.HasPrefix(end.id, "device:") || end.port == "" {
				continue
			}
			dev, _ := strconv.ParseInt(end.id[len("device:"):], 10, 64)
			f, ok := ports[portKey{dev, end.port}]
			if !ok {
				continue
			}
			down = down || f.down
			if f.util != nil && (util == nil || *f.util > *util) {
				util = f.util
			}
		}
		l.UtilPct, l.Status = util, Status(util, down)
		key := [2]string{min(a, b), max(a, b)}
		old := links[key]
		// The most confident edge of a pair wins; between equals, the
		// one reported by the lower end (a stable choice of ports).
		if old == nil || rank[l.Confidence] > rank[old.Confidence] ||
			(rank[l.Confidence] == rank[old.Confidence] && l.Source == key[0] && old.Source != key[0]) {
			if old != nil {
				l.TS = max(l.TS, old.TS)
			}
			links[key] = &l
		} else {
			old.TS = max(old.TS, l.TS)
		}
	}
	linked := map[string]bool{}
	for key := range links {
		linked[key[0]], linked[key[1]] = true, true
	}
	for _, a := range agents {
		id := "agent:" + strconv.FormatInt(a.ID, 10)
		if linked[id] || a.LastSeen < cutoff {
			continue
		}
		if l, ok := subnetLink(a, devs); ok {
			links[[2]string{min(l.Source, l.Target), max(l.Source, l.Target)}] = &l
		}
	}
	for key, l := range links {
		l.ID = key[0] + "|" + key[1]
		t.Links = append(t.Links, *l)
	}
	slices.SortFunc(t.Links, func(x, y Link) int { return cmp.Compare(x.ID, y.ID) })
	return t, nil
}

// hostOnly is the address part of host[:port].
func hostOnly(h string) string {
	if i := strings.LastIndex(h, ":"); i > 0 && !strings.Contains(h[:i], ":") {
		return h[:i]
	}
	return strings.Trim(h, "[]")
}
