package record

import (
	"net"
	"strconv"
)

// The alert engine's inputs, in the vocabulary their owners produce them
// in: the capture its traffic and DNS names, the socket lister and the
// fleet their connection inventories, the store the names agents
// reported, the threat list its hits. Here, not in alerting/rules, so an
// owner implements the engine's interface without importing alerting.

// Traffic is what the bw and target rules read of the hub's capture.
type Traffic struct {
	// Running is false when the capture is stopped (no rate to judge).
	Running bool
	// InBps and OutBps are the last second's rates in bits per second.
	InBps, OutBps float64
	// Endpoints are remote addresses with their total bytes so far.
	Endpoints []TrafficEndpoint
}

// TrafficEndpoint is a remote address and the bytes exchanged with it.
type TrafficEndpoint struct {
	IP    string
	Total int64
}

// Conn is one established connection of an inventory (the hub's own or an
// agent's last batch).
type Conn struct {
	// AgentID is the agent (0: the hub host).
	AgentID int64
	// Site is the agent's site.
	Site string
	// RemoteIP and RemotePort are the remote end.
	RemoteIP   string
	RemotePort uint16
	// Process is the owning process's name (empty: unknown).
	Process string
}

// Inventory is one host's connection list.
type Inventory struct {
	AgentID int64
	Site    string
	Conns   []Conn
}

// AppendEstablished appends the connection to out when it is established
// and has a remote end ("ip:port", port not 0), as the inventory rules
// read connections; the owners of inventories (the fleet for agents, the
// hub host's socket lister) build their Inventory with it.
func AppendEstablished(out []Conn, remote, status, process string, agent int64, site string) []Conn {
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
	return append(out, Conn{AgentID: agent, Site: site, RemoteIP: host, RemotePort: uint16(p), Process: process})
}

// ObservedName is a domain name a host was seen using: a DNS query, a TLS
// SNI or an HTTP Host (the ioc rule's input).
type ObservedName struct {
	AgentID int64 // 0: the hub's capture
	Site    string
	Name    string
	// Source is dns, tls or http.
	Source string
	// TS is when the name was last reported (the minute of an agent's
	// batch; the hub capture's count of queries for the name). The rule
	// raises a name again only when it advanced.
	TS int64
}

// IOCHit is the threat-list entry that matched a name.
type IOCHit struct {
	Entry string
	List  string
	Line  int
}
