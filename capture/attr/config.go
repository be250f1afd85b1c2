package attr

import "time"

// Config selects and tunes the attribution backend.
type Config struct {
	// Method is collect.method: auto, ebpf, pcap, etw or off.
	Method string
	// PcapInterface is collect.pcap_interface; empty lets the agent pick
	// (ChooseInterface).
	PcapInterface string
	// Snaplen is the bytes kept of each frame by pcap: enough for the
	// headers, a DNS message and the start of a ClientHello (spec: 600).
	Snaplen int
	// SampleWindow is how long the counters of several physical
	// interfaces are watched to pick the busiest.
	SampleWindow time.Duration
	// LookupEvery is the shortest time between two reads of the socket
	// tables: a new flow triggers a read, at most this often, never one
	// per packet.
	LookupEvery time.Duration
	// MaxFlows bounds the flow table; traffic of flows beyond it is
	// counted as unattributed ("flow table full").
	MaxFlows int
	// FlowIdle is how long a flow without packets is kept (its owner
	// remembered) before it is forgotten.
	FlowIdle time.Duration
	// NoNames runs the ebpf backend without the pcap beside it that
	// reads the L7 and DNS names (bytes per process only).
	NoNames bool
	// MaxRows bounds each section of a report (processes, l7, dns); the
	// rows with the least traffic are left out.
	MaxRows int
}

// DefaultConfig is auto with the spec's snaplen.
func DefaultConfig() Config {
	return Config{
		Method:       MethodAuto,
		Snaplen:      600,
		SampleWindow: time.Second,
		LookupEvery:  50 * time.Millisecond,
		MaxFlows:     65536,
		FlowIdle:     2 * time.Minute,
		MaxRows:      500,
	}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Method == "" {
		c.Method = d.Method
	}
	if c.Snaplen <= 0 {
		c.Snaplen = d.Snaplen
	}
	if c.SampleWindow <= 0 {
		c.SampleWindow = d.SampleWindow
	}
	if c.LookupEvery <= 0 {
		c.LookupEvery = d.LookupEvery
	}
	if c.MaxFlows <= 0 {
		c.MaxFlows = d.MaxFlows
	}
	if c.FlowIdle <= 0 {
		c.FlowIdle = d.FlowIdle
	}
	if c.MaxRows <= 0 {
		c.MaxRows = d.MaxRows
	}
	return c
}
