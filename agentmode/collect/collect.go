// Package collect takes the agent's base telemetry (spec 2.9): the host's
// cumulative interface counters (gopsutil) and its connection inventory
// (capture/proc, shared with the hub's GET /api/connections).
//
// Deep collection (per-process traffic, DNS names, TLS SNI / HTTP Host
// through ebpf, etw or pcap) is not in this build: whatever collect.method
// asks for, a batch says attr_method "off" and attr_note says why, which is
// what the spec prescribes when no backend can start ("attribution is off
// and base telemetry continues").
//
// It sits under agentmode and imports agentmode/wire and capture/proc.
package collect

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	gnet "github.com/shirou/gopsutil/v4/net"

	"netmon/agentmode/wire"
	"netmon/capture/proc"
)

// Methods lists the accepted values of collect.method.
var Methods = []string{"auto", "ebpf", "pcap", "etw", "off"}

// ValidMethod reports whether m is one of Methods.
func ValidMethod(m string) bool {
	for _, x := range Methods {
		if x == m {
			return true
		}
	}
	return false
}

// Config selects the attribution backend.
type Config struct {
	// Method is collect.method: auto, ebpf, pcap, etw or off.
	Method string
	// PcapInterface is collect.pcap_interface (pcap backend only).
	PcapInterface string
}

// DefaultConfig is auto with the interface chosen by the agent.
func DefaultConfig() Config { return Config{Method: "auto"} }

// Collector takes one telemetry batch at a time.
type Collector struct {
	log    *slog.Logger
	cfg    Config
	lister *proc.Lister
	// counters reads the interface counters; a field so tests can stub it.
	counters func(ctx context.Context) ([]wire.Interface, error)
}

// New returns a collector; it does no work until Collect.
func New(log *slog.Logger, cfg Config) *Collector {
	return &Collector{log: log, cfg: cfg, lister: proc.NewLister(), counters: ioCounters}
}

// Attribution returns the attr_method, attr_iface and attr_note every
// batch carries.
func (c *Collector) Attribution() (method, iface, note string) {
	if c.cfg.Method == "off" {
		return "off", "", "deep collection is disabled by collect.method=off"
	}
	return "off", "", fmt.Sprintf("deep collection (per-process traffic, DNS, SNI) is not in this build yet (collect.method=%s); sending interface counters and connections only", c.cfg.Method)
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
	t.AttrMethod, t.AttrIface, t.AttrNote = c.Attribution()
	return t
}

func ioCounters(ctx context.Context) ([]wire.Interface, error) {
	stats, err := gnet.IOCountersWithContext(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("interface counters: %w", err)
	}
	out := make([]wire.Interface, 0, len(stats))
	for _, s := range stats {
		if strings.TrimSpace(s.Name) == "" || s.Name == "all" {
			continue
		}
		out = append(out, wire.Interface{
			Name: s.Name, RxBytes: s.BytesRecv, TxBytes: s.BytesSent,
			RxPackets: s.PacketsRecv, TxPackets: s.PacketsSent,
		})
	}
	return out, nil
}
