package rules

import (
	"fmt"
	"strconv"
)

// Proc is the proc rule: a process never seen before on that host. The
// first inventory of a host only fills its seen-table, silently (spec 3:
// "proc drops its first-run baseline"), so a hub that starts, or an agent
// that enrolls, does not raise an alert for every process it runs.
type Proc struct {
	seen map[int64]map[string]struct{}
}

// Eval appends to out an alert for each process of inv not seen before on
// that host and not in ignore, keyed <agent>|<process>.
func (r *Proc) Eval(inv Inventory, ignore map[string]bool, out []Alert) []Alert {
	if r.seen == nil {
		r.seen = map[int64]map[string]struct{}{}
	}
	seen, known := r.seen[inv.AgentID]
	if !known {
		seen = map[string]struct{}{}
		r.seen[inv.AgentID] = seen
	}
	for i := range inv.Conns {
		name := inv.Conns[i].Process
		if name == "" {
			continue
		}
		if _, ok := seen[name]; ok {
			continue
		}
		seen[name] = struct{}{}
		if !known || ignore[name] {
			continue
		}
		who := "the hub"
		if inv.AgentID != 0 {
			who = "agent " + strconv.FormatInt(inv.AgentID, 10)
		}
		out = append(out, Alert{
			Kind: KindProc, Key: strconv.FormatInt(inv.AgentID, 10) + "|" + name,
			Severity: SeverityProc, Site: inv.Site, AgentID: inv.AgentID, Process: name,
			Message: fmt.Sprintf("%s: new process %s with network connections", who, name),
		})
	}
	return out
}

// Forget drops a host's seen-table (a deleted agent).
func (r *Proc) Forget(agentID int64) { delete(r.seen, agentID) }
