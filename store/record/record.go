// Package record is the vocabulary of what netmon ingests: the values
// producers (flow and syslog collectors, the agent intake) hand to the
// ingest path, and the Sink they hand them to. It is a leaf: standard
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
	// NUL bytes, which are replaced by U+FFFD (databases refuse them).
	Message string
}

// Sink is the ingest path. Put methods never block: when the path is full
// the records are dropped, counted with the reason "queue_full", and the
// call returns false. The sink copies what it keeps, so the caller may
// reuse its slice at once.
type Sink interface {
	PutFlows(fs []Flow) bool
	PutSyslog(es []SyslogEvent) bool
}
