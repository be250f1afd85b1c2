// Package record is the vocabulary of what netmon's components exchange:
// the values producers (flow and syslog collectors, the agent intake)
// hand to the ingest path and the Sink they hand them to, and the inputs
// the owners of data hand the alert engine (alertinput.go). It is a leaf: standard
// library only, so a producer cannot tell a channel from NATS from a
// direct write (STYLE.md, "Which way imports run").
package record

import "net/netip"

// Flow is one flow record as decoded from NetFlow v5/v9, IPFIX or sFlow
// (spec 2.11). Octets and Packets of sFlow samples are already scaled by
// the sampling rate.
type Flow struct {
	// TS is when the flow was seen, Unix seconds (the flow's end, or the
	// receive time when the exporter's clock is unusable).
	TS int64
	// Exporter is the address the datagram came from (the spec's device).
	Exporter         netip.Addr
	Src, Dst         netip.Addr
	SrcPort, DstPort uint16
	// Proto is the IP protocol number (6 TCP, 17 UDP, 1 ICMP ...).
	Proto   uint8
	Packets uint64
	Octets  uint64
}

// SyslogEvent is one syslog message (spec 2.11).
type SyslogEvent struct {
	// TS is the message's time, Unix seconds (the receive time when the
	// message has none or an unusable one).
	TS int64
	// Host is the HOSTNAME field, or the sender's address when absent.
	Host string
	// Source is the address the datagram came from.
	Source netip.Addr
	// Severity is 0 (emergency) to 7 (debug); Facility 0-23.
	Severity uint8
	Facility uint8
	// Tag is the APP-NAME / TAG field ("" when absent).
	Tag string
	// Message is the free text, kept byte-exact but for invalid UTF-8 and
	// NUL bytes, which are replaced by U+FFFD (databases refuse them in
	// text).
	Message string
	// Raw is the datagram as received, set only when it holds bytes the
	// text fields above cannot (invalid UTF-8, NUL before the trailing
	// framing); nil otherwise, so that clean messages cost nothing.
	Raw []byte
}

// Sink is the ingest path. Put methods never block: when the path is full
// the records are dropped, counted with the reason "queue_full", and the
// call returns false. The sink copies what it keeps, so the caller may
// reuse its slice at once.
type Sink interface {
	PutFlows(fs []Flow) bool
	PutSyslog(es []SyslogEvent) bool
	PutTelemetry(ts []Telemetry) bool
}

// Telemetry is one agent telemetry batch as the hub stores it (spec 2.9),
// after the fleet intake has checked the agent and turned cumulative
// interface counters into rates. The JSON fields are pre-encoded by the
// intake so that the store need not know the wire types.
type Telemetry struct {
	AgentID int64
	// Seq is the batch number; a batch is stored once per (agent, seq).
	Seq uint64
	// TS is the batch time, Unix seconds (already clamped by the intake).
	TS int64
	// RemoteIP is the address the batch came from.
	RemoteIP string
	Version  string
	// In, Out and Local are bytes/s since the previous batch summed over
	// the interfaces (Local: loopback interfaces; In/Out: the others);
	// PPS is packets/s of the non-loopback interfaces. All 0 for the first
	// batch, after a counter reset, or when the interval is unusable.
	In, Out, Local, PPS float64
	// HasRates is false when no rate could be computed (first batch).
	HasRates bool
	// Rates is the JSON array of per-interface rates (agent list "rates").
	Rates []byte
	// Counters is the JSON of the cumulative counters of this batch, kept
	// so that rates continue across a hub restart.
	Counters []byte
	// Connections is the JSON array of the batch's connections, which
	// replace the previous inventory; Conns is their number.
	Connections []byte
	Conns       int
	// AttrMethod, AttrIface and AttrNote describe the agent's attribution.
	AttrMethod, AttrIface, AttrNote string
	// Dropped is the number of batches the agent reported it discarded.
	Dropped uint64
}

// FlowTemplate is a v9/IPFIX template as the flow collector persists it
// across restarts: the key columns and a JSON body of the rest, whose
// format is collectors/flows'.
type FlowTemplate struct {
	Exporter string
	Domain   int64
	ID       int
	Version  int
	Body     string
}
