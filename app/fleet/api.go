package fleet

import (
	"context"
	"net/netip"

	"netmon/agentmode/wire"
	"netmon/app/fleet/agents"
	"netmon/app/fleet/enroll"
	"netmon/app/fleet/intake"
	"netmon/store"
)

// The types the API exchanges with the fleet. They are declared by the
// job that owns them; these names keep the API's one view of the fleet.
type (
	// AgentRef is an authenticated agent.
	AgentRef = intake.AgentRef
	// Batch is a telemetry batch as the intake reads it.
	Batch = intake.Batch
	// Rate is one interface's rates in the agent list.
	Rate = intake.Rate
	// AgentItem is an agent in the list.
	AgentItem = agents.AgentItem
	// AgentDetail is an agent with the connections of its last batch.
	AgentDetail = agents.AgentDetail
	// EnrollTokenCreate is the body of POST /api/v1/enroll-tokens.
	EnrollTokenCreate = enroll.EnrollTokenCreate
	// EnrollTokenCreated is the answer: the secret, shown this once.
	EnrollTokenCreated = enroll.EnrollTokenCreated
	// EnrollTokenItem is an enroll token as listed.
	EnrollTokenItem = enroll.EnrollTokenItem
)

// Actor is who asks for an administrative change (from the API's identity).
type Actor struct {
	Username  string
	Role      string
	ActorType string
	// Site is the caller's site ("" = all sites).
	Site string
}

func (a Actor) audit() store.AuditActor {
	return store.AuditActor{Username: a.Username, Role: a.Role, ActorType: a.ActorType}
}

// Hello enrolls an agent (enroll.Service.Hello).
func (s *Service) Hello(ctx context.Context, secret string, ip netip.Addr, h wire.Hello) (wire.HelloResponse, error) {
	return s.enroll.Hello(ctx, secret, ip, h)
}

// Authenticate resolves an agent route's caller (intake.Service.Authenticate).
func (s *Service) Authenticate(ctx context.Context, bearer string, certAgent int64) (AgentRef, error) {
	return s.intake.Authenticate(ctx, bearer, certAgent)
}

// Telemetry takes one batch (intake.Service.Telemetry).
func (s *Service) Telemetry(ctx context.Context, agent AgentRef, ip netip.Addr, t Batch) (wire.TelemetryResponse, error) {
	return s.intake.Telemetry(ctx, agent, ip, t)
}

// IssueCert signs a renewed client certificate for agent.
func (s *Service) IssueCert(ctx context.Context, agent AgentRef, csrPEM string) (wire.CertResponse, error) {
	return s.enroll.IssueCert(ctx, agent.ID, csrPEM)
}

// ListAgents lists the agents visible to a caller of site ("" = all).
func (s *Service) ListAgents(ctx context.Context, site string) ([]AgentItem, error) {
	return s.agents.ListAgents(ctx, site)
}

// AgentDetail returns agent id with its last connections.
func (s *Service) AgentDetail(ctx context.Context, site string, id int64) (AgentDetail, error) {
	return s.agents.AgentDetail(ctx, site, id)
}

// AgentHistory returns agent id's rates over the last minutes.
func (s *Service) AgentHistory(ctx context.Context, site string, id int64, minutes int) ([]store.AgentSample, error) {
	return s.agents.AgentHistory(ctx, site, id, minutes)
}

// DeleteAgent deletes agent id with its data (audited).
func (s *Service) DeleteAgent(ctx context.Context, actor Actor, id int64) error {
	return s.agents.DeleteAgent(ctx, actor.audit(), actor.Site, id)
}

// RenameAgent sets agent id's display name on the hub (audited).
func (s *Service) RenameAgent(ctx context.Context, actor Actor, id int64, name string) (AgentItem, error) {
	return s.agents.RenameAgent(ctx, actor.audit(), actor.Site, id, name)
}

// ArchiveOnce deletes the agents offline for ArchiveDays now.
func (s *Service) ArchiveOnce(ctx context.Context) (int, error) { return s.agents.ArchiveOnce(ctx) }

// CreateEnrollToken makes an enroll token and returns its secret once.
func (s *Service) CreateEnrollToken(ctx context.Context, actor Actor, req EnrollTokenCreate) (EnrollTokenCreated, error) {
	return s.enroll.CreateEnrollToken(ctx, actor.audit(), actor.Site, req)
}

// ListEnrollTokens lists the tokens visible to actor.
func (s *Service) ListEnrollTokens(ctx context.Context, actor Actor) ([]EnrollTokenItem, error) {
	return s.enroll.ListEnrollTokens(ctx, actor.Site)
}

// RevokeEnrollToken revokes token id: the next hello with it is refused.
func (s *Service) RevokeEnrollToken(ctx context.Context, actor Actor, id int64) (EnrollTokenItem, error) {
	return s.enroll.RevokeEnrollToken(ctx, actor.audit(), actor.Site, id)
}
