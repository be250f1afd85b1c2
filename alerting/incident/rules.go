// Package incident is the correlation engine of spec 6.4: about every
// 30 s it reads the alert events of the correlation window, groups each
// agent's events with five deterministic rules (no AI), and records an
// incident per match under the correlation key r<rule>|agent<id>. There is
// one open incident per key; a repeat raises its severity only and keeps
// the highest risk. Operators move incidents through the state machine of
// state.go (audited by the API).
//
// It imports only leaves: the store comes through the small Store
// interface, which app/hub fills with *store.DB.
package incident

import (
	"fmt"
	"slices"
	"strings"

	"netmon/store/record"
)

// The correlation rules of spec 6.4.
const (
	// RuleProcTarget: a new process and a new target or a threat-list
	// name on the same agent.
	RuleProcTarget = 1
	// RuleProcTargetPort: rule 1 plus a suspicious port; it supersedes
	// rule 1 in the same window.
	RuleProcTargetPort = 2
	// RuleTargetBW: a new target and a bandwidth alert.
	RuleTargetBW = 3
	// RuleAnomalyBW: a traffic anomaly and a bandwidth alert.
	RuleAnomalyBW = 4
	// RuleSuspicious: at least N suspicious events (kinds port, proc,
	// target, ioc, anomaly) on one agent.
	RuleSuspicious = 5
)

// ruleInfo is a rule's base risk, the members it needs at least, and
// its name for titles.
var ruleInfo = map[int]struct {
	base, min int
	name      string
}{
	RuleProcTarget:     {60, 2, "new process + new target/ioc"},
	RuleProcTargetPort: {85, 3, "new process + new target/ioc + suspicious port"},
	RuleTargetBW:       {50, 2, "new target + bandwidth"},
	RuleAnomalyBW:      {45, 2, "traffic anomaly + bandwidth"},
	RuleSuspicious:     {40, 0, "suspicious events"},
}

// suspicious are the kinds rule 5 counts: the security-relevant ones
// (bw and iface_util are capacity, not threat, signals).
var suspicious = map[string]bool{"port": true, "proc": true, "target": true, "ioc": true, "anomaly": true}

// Match is one correlation found in a window.
type Match struct {
	Rule     int
	AgentID  int64
	Site     string
	Members  []record.AlertEvent
	Severity int
	Risk     int
	Title    string
}

// Key is the match's correlation key.
func (m Match) Key() string { return Key(m.Rule, m.AgentID) }

// Key is the correlation key r<rule>|agent<id>.
func Key(rule int, agent int64) string { return fmt.Sprintf("r%d|agent%d", rule, agent) }

// Risk is the rule's base risk, plus 5 for each member beyond the rule's
// minimum, plus 2 for each severity step above 5 of the worst member,
// capped at 100. minMembers is the rule's minimum (N for rule 5).
func Risk(rule, members, minMembers, severity int) int {
	r := ruleInfo[rule].base + 5*max(members-minMembers, 0) + 2*max(severity-5, 0)
	return min(r, 100)
}

// Correlate applies the five rules to the events of one window (any
// order) and returns the matches, by agent then rule. minSuspicious is N
// of rule 5 (at least 2).
func Correlate(events []record.AlertEvent, minSuspicious int) []Match {
	minSuspicious = max(minSuspicious, 2)
	byAgent := map[int64][]record.AlertEvent{}
	var agents []int64
	for _, e := range events {
		if _, ok := byAgent[e.AgentID]; !ok {
			agents = append(agents, e.AgentID)
		}
		byAgent[e.AgentID] = append(byAgent[e.AgentID], e)
	}
	slices.Sort(agents)
	var out []Match
	for _, a := range agents {
		evs := byAgent[a]
		slices.SortFunc(evs, func(x, y record.AlertEvent) int { return int(x.ID - y.ID) })
		of := func(kinds ...string) []record.AlertEvent {
			var r []record.AlertEvent
			for _, e := range evs {
				if slices.Contains(kinds, e.Kind) {
					r = append(r, e)
				}
			}
			return r
		}
		has := func(kinds ...string) bool { return len(of(kinds...)) > 0 }
		add := func(rule, minMembers int, members []record.AlertEvent) {
			m := Match{Rule: rule, AgentID: a, Members: members}
			var kinds []string
			for _, e := range members {
				m.Severity = max(m.Severity, e.Severity)
				if e.Site != "" {
					m.Site = e.Site
				}
				if !slices.Contains(kinds, e.Kind) {
					kinds = append(kinds, e.Kind)
				}
			}
			m.Risk = Risk(rule, len(members), minMembers, m.Severity)
			who := "the hub"
			if a != 0 {
				who = fmt.Sprintf("agent %d", a)
			}
			m.Title = fmt.Sprintf("%s: %s (%d events: %s)", who, ruleInfo[rule].name, len(members), strings.Join(kinds, ", "))
			out = append(out, m)
		}
		if has("proc") && has("target", "ioc") {
			if has("port") {
				add(RuleProcTargetPort, ruleInfo[RuleProcTargetPort].min, of("proc", "target", "ioc", "port"))
			} else {
				add(RuleProcTarget, ruleInfo[RuleProcTarget].min, of("proc", "target", "ioc"))
			}
		}
		if has("target") && has("bw") {
			add(RuleTargetBW, ruleInfo[RuleTargetBW].min, of("target", "bw"))
		}
		if has("anomaly") && has("bw") {
			add(RuleAnomalyBW, ruleInfo[RuleAnomalyBW].min, of("anomaly", "bw"))
		}
		var sus []record.AlertEvent
		for _, e := range evs {
			if suspicious[e.Kind] {
				sus = append(sus, e)
			}
		}
		if len(sus) >= minSuspicious {
			add(RuleSuspicious, minSuspicious, sus)
		}
	}
	return out
}
