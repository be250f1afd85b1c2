package rules

import (
	"net"
	"strconv"
)

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
