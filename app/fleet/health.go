package fleet

import "context"

// AgentCounts returns the agents of site ("" = every site) and how many
// of them are offline (the network health score; alerting/health.Agents).
func (s *Service) AgentCounts(ctx context.Context, site string) (total, offline int, err error) {
	agents, err := s.ListAgents(ctx, site)
	if err != nil {
		return 0, 0, err
	}
	for _, a := range agents {
		if !a.Online {
			offline++
		}
	}
	return len(agents), offline, nil
}

// Dropped returns the telemetry batches agents reported discarding from
// their full offline queue since start (alerting/health.Dropper).
func (s *Service) Dropped() uint64 { return s.intake.SpoolDropped() }
