// Package collect takes the agent's base telemetry (spec 2.9): the host's
// cumulative interface counters (gopsutil) and its connection inventory
// (capture/proc, shared with the hub's GET /api/connections).
//
// It also runs deep collection (spec 1, 2.9): the attribution backend
// collect.method selects (capture/attr), whose per-interval report fills
// the batch's processes, l7 and dns sections. When no backend can start,
// or collect.method is off, or the hub's policy (-agent-pcap=false, learnt
// from the hello and telemetry answers) forbids it, attribution is off,
// the sections are left out and base telemetry goes on; every batch says
// so in attr_method and attr_note.
//
// It sits under agentmode and imports agentmode/wire, capture/proc and
// capture/attr.
package collect

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"time"

	gnet "github.com/shirou/gopsutil/v4/net"

	"netmon/agentmode/wire"
	"netmon/capture/attr"
	"netmon/capture/proc"
)

// Methods lists the accepted values of collect.method.
var Methods = []string{attr.MethodAuto, attr.MethodEBPF, attr.MethodPcap, attr.MethodETW, attr.MethodOff}

// ValidMethod reports whether m is one of Methods.
func ValidMethod(m string) bool {
	for _, x := range Methods {
		if x == m {
			return true
		}
	}
	return false
}

// Config selects the attribution backend (capture/attr tunes the rest).
type Config struct {
	// Method is collect.method: auto, ebpf, pcap, etw or off.
	Method string
	// PcapInterface is collect.pcap_interface (pcap backend only).
	PcapInterface string
}

// DefaultConfig is auto with the interface chosen by the agent.
func DefaultConfig() Config { return Config{Method: "auto"} }

// RetryEvery is how long the collector waits before trying again to start
// an attribution backend that could not start (a capability granted
// later, an interface that appears).
const RetryEvery = 5 * time.Minute

// Notes of attr_note that do not come from a backend.
const (
	NoteMethodOff = "collect.method off"
	NoteHubPolicy = "hub policy -agent-pcap=false"
)

// Collector takes one telemetry batch at a time.
type Collector struct {
	log    *slog.Logger
	cfg    Config
	lister *proc.Lister
	// counters reads the interface counters; a field so tests can stub it.
	counters func(ctx context.Context) ([]wire.Interface, error)
	// open starts an attribution backend (attr.Open); a field so tests
	// can stub it.
	open func(log *slog.Logger, cfg attr.Config) (attr.Backend, attr.Status)

	mu      sync.Mutex
	hubOff  bool // the hub's policy forbids deep collection
	backend attr.Backend
	status  attr.Status
	retryAt time.Time
	now     func() time.Time
}

// New returns a collector; it does no work until Collect.
func New(log *slog.Logger, cfg Config) *Collector {
	return &Collector{log: log, cfg: cfg, lister: proc.NewLister(), counters: ioCounters, open: attr.Open, now: time.Now}
}

// SetHubPolicy applies the hub's deep-collection policy (pcap_enabled of
// the hello or telemetry answer); it takes effect at the next batch.
func (c *Collector) SetHubPolicy(enabled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hubOff == !enabled {
		return
	}
	c.hubOff = !enabled
	c.retryAt = time.Time{}
	c.log.Info("hub deep-collection policy changed", "pcap_enabled", enabled)
}

// Attribution returns the attr_method, attr_iface and attr_note of the
// last batch.
func (c *Collector) Attribution() (method, iface, note string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status.Method, c.status.Iface, c.status.Note
}

// Stop stops the attribution backend, if one runs.
func (c *Collector) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopBackend()
}

func (c *Collector) stopBackend() error {
	if c.backend == nil {
		return nil
	}
	err := c.backend.Stop()
	c.backend = nil
	if err != nil {
		return fmt.Errorf("stop attribution backend: %w", err)
	}
	return nil
}

// deep fills the batch's attribution fields and, with a backend running,
// its processes, l7 and dns sections.
func (c *Collector) deep(t *wire.Telemetry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.cfg.Method == attr.MethodOff:
		c.status = attr.Status{Method: attr.MethodOff, Note: NoteMethodOff}
	case c.hubOff:
		if c.backend != nil {
			c.log.Info("deep collection stopped by the hub's policy")
			if err := c.stopBackend(); err != nil {
				c.log.Warn("attribution backend did not stop cleanly", "err", err)
			}
		}
		c.status = attr.Status{Method: attr.MethodOff, Note: NoteHubPolicy}
	case c.backend == nil && !c.now().Before(c.retryAt):
		cfg := attr.DefaultConfig()
		cfg.Method, cfg.PcapInterface = c.cfg.Method, c.cfg.PcapInterface
		c.backend, c.status = c.open(c.log, cfg)
		if c.backend == nil {
			c.retryAt = c.now().Add(RetryEvery)
			c.log.Warn("deep collection off: no attribution backend could start", "note", c.status.Note)
		}
	}
	if c.backend == nil {
		return
	}
	r := c.backend.Collect()
	t.Processes, t.L7, t.DNS = r.Processes, r.L7, r.DNS
}

// Collect takes a batch. A source that fails is logged and left empty:
// counters without connections are still worth sending.
func (c *Collector) Collect(ctx context.Context) wire.Telemetry {
	t := wire.Telemetry{Interfaces: []wire.Interface{}, Connections: []wire.Connection{}}
	if ifs, err := c.counters(ctx); err != nil {
		c.log.Warn("interface counters unavailable", "err", err)
	} else {
		t.Interfaces = ifs
	}
	if conns, err := c.lister.List(ctx); err != nil {
		c.log.Warn("connection inventory unavailable", "err", err)
	} else {
		t.Connections = make([]wire.Connection, 0, len(conns))
		for _, k := range conns {
			t.Connections = append(t.Connections, wire.Connection{
				Proto: k.Proto, LocalAddr: k.LocalAddr, RemoteAddr: k.RemoteAddr,
				Status: k.Status, PID: k.PID, Process: k.Process,
			})
		}
	}
	c.deep(&t)
	t.AttrMethod, t.AttrIface, t.AttrNote = c.Attribution()
	return t
}

func ioCounters(ctx context.Context) ([]wire.Interface, error) {
	stats, err := gnet.IOCountersWithContext(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("interface counters: %w", err)
	}
	addrs := interfaceAddrs(ctx)
	out := make([]wire.Interface, 0, len(stats))
	for _, s := range stats {
		if strings.TrimSpace(s.Name) == "" || s.Name == "all" {
			continue
		}
		out = append(out, wire.Interface{
			Name: s.Name, RxBytes: s.BytesRecv, TxBytes: s.BytesSent,
			RxPackets: s.PacketsRecv, TxPackets: s.PacketsSent, Addrs: addrs[s.Name],
			SpeedMbps: linkSpeed(s.Name),
		})
	}
	return out, nil
}

// interfaceAddrs maps interface names to their addresses in CIDR
// (loopback and link-local left out: they link the agent to nothing).
// Without the list the counters still go, without addresses.
func interfaceAddrs(ctx context.Context) map[string][]string {
	list, err := gnet.InterfacesWithContext(ctx)
	if err != nil {
		return nil
	}
	out := make(map[string][]string, len(list))
	for _, f := range list {
		for _, a := range f.Addrs {
			p, err := netip.ParsePrefix(a.Addr)
			if err != nil || p.Addr().IsLoopback() || p.Addr().IsLinkLocalUnicast() || len(out[f.Name]) >= wire.MaxAddrs {
				continue
			}
			out[f.Name] = append(out[f.Name], p.String())
		}
	}
	return out
}
