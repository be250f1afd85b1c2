package rules

import (
	"fmt"
	"strconv"
)

// Port is the port rule: an established connection to a listed remote
// port. The port list is a 64 Ki bitmap, so a connection costs one index.
type Port struct {
	listed [65536 / 64]uint64
}

// SetPorts replaces the list.
func (r *Port) SetPorts(ports []int) {
	r.listed = [65536 / 64]uint64{}
	for _, p := range ports {
		if p > 0 && p < 65536 {
			r.listed[p/64] |= 1 << (p % 64)
		}
	}
}

// Listed reports whether port p is on the list.
func (r *Port) Listed(p uint16) bool { return r.listed[p/64]&(1<<(p%64)) != 0 }

// Eval appends to out an alert for each connection of inv to a listed
// port, keyed <agent>|<remote ip>:<port>.
func (r *Port) Eval(inv Inventory, out []Alert) []Alert {
	for i := range inv.Conns {
		c := &inv.Conns[i]
		if !r.Listed(c.RemotePort) {
			continue
		}
		port := strconv.Itoa(int(c.RemotePort))
		who := "the hub"
		if inv.AgentID != 0 {
			who = "agent " + strconv.FormatInt(inv.AgentID, 10)
		}
		proc := c.Process
		if proc == "" {
			proc = "unknown process"
		}
		out = append(out, Alert{
			Kind: KindPort, Key: strconv.FormatInt(inv.AgentID, 10) + "|" + c.RemoteIP + ":" + port,
			Severity: SeverityPort, Site: inv.Site, AgentID: inv.AgentID, Process: c.Process,
			Message: fmt.Sprintf("%s: %s connected to suspicious port %s on %s", who, proc, port, c.RemoteIP),
		})
	}
	return out
}
