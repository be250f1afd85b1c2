package ai

import "slices"

// presets are the server-defined tasks (spec 2.8): fixed text reviewed
// with the system prompt, so a click asks the same question every time.
var presets = []Preset{
	{ID: "explain-anomaly", Label: "Explain this anomaly", Scopes: []string{ScopeAnomaly},
		Task: "Explain this alert: what deviated and by how much against the baseline, the most likely cause given the facts, whether it looks benign or malicious, and what to check first."},
	{ID: "summarise-incident", Label: "Summarise this incident", Scopes: []string{ScopeIncident},
		Task: "Summarise this incident for the on-call operator: what happened in order, which agents, processes and destinations are involved, how serious it looks, and the next three checks."},
	{ID: "agent-changes", Label: "What changed since yesterday?", Scopes: []string{ScopeAgent},
		Task: "What changed on this agent since yesterday: new processes, new destinations and domains, traffic against its baseline, new alerts. Say which changes deserve a look and why."},
	{ID: "expected-process", Label: "Is this process or domain expected?", Scopes: []string{ScopeAgent, ScopeAnomaly},
		Task: "For the processes and domains in the facts that are new or rare here: is each one expected on a machine like this, and what would make it suspicious? Quote the names as tokens."},
	{ID: "device-health", Label: "How healthy is this device?", Scopes: []string{ScopeDevice},
		Task: "Assess this device's health: reachability, errors, interface utilisation and resources. Name what is degraded and what to check."},
	{ID: "whats-broken", Label: "What is broken right now?", Scopes: []string{ScopeFleet},
		Task: "What is broken or degraded right now across the fleet? Order by severity, cite the facts, and say what to check first."},
	{ID: "week-review", Label: "The week in review", Scopes: []string{ScopeFleet},
		Task: "Write the week in review: traffic against the baseline, the busiest hosts and destinations, alerts and incidents, device health, and anything that changed. Keep it short."},
}

// Presets returns the presets (a copy).
func (s *Service) Presets() []Preset {
	out := make([]Preset, len(presets))
	for i, p := range presets {
		p.Scopes = slices.Clone(p.Scopes)
		out[i] = p
	}
	return out
}

func presetByID(id string) (Preset, bool) {
	for _, p := range presets {
		if p.ID == id {
			return p, true
		}
	}
	return Preset{}, false
}
