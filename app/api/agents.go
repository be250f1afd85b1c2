package api

import (
	"context"
	"net/netip"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/agentmode/wire"
	"netmon/app/api/router"
	"netmon/app/auth"
	"netmon/app/fleet"
	"netmon/store"
)

// Fleet is the hub side of the agents (*fleet.Service); authorize uses
// its AgentAuthenticator part.
type Fleet interface {
	AgentAuthenticator
	Hello(ctx context.Context, secret string, ip netip.Addr, h wire.Hello) (wire.HelloResponse, error)
	Telemetry(ctx context.Context, agent fleet.AgentRef, ip netip.Addr, t fleet.Batch) (wire.TelemetryResponse, error)
	IssueCert(ctx context.Context, agent fleet.AgentRef, csrPEM string) (wire.CertResponse, error)
	ListAgents(ctx context.Context, site string) ([]fleet.AgentItem, error)
	AgentDetail(ctx context.Context, site string, id int64) (fleet.AgentDetail, error)
	AgentHistory(ctx context.Context, site string, id int64, minutes int) ([]store.AgentSample, error)
	DeleteAgent(ctx context.Context, actor fleet.Actor, id int64) error
	RenameAgent(ctx context.Context, actor fleet.Actor, id int64, name string) (fleet.AgentItem, error)
	CreateEnrollToken(ctx context.Context, actor fleet.Actor, req fleet.EnrollTokenCreate) (fleet.EnrollTokenCreated, error)
	ListEnrollTokens(ctx context.Context, actor fleet.Actor) ([]fleet.EnrollTokenItem, error)
	RevokeEnrollToken(ctx context.Context, actor fleet.Actor, id int64) (fleet.EnrollTokenItem, error)
}

func actorOf(id *auth.Identity) fleet.Actor {
	return fleet.Actor{Username: id.Username, Role: string(id.Role), ActorType: string(id.Actor), Site: id.SiteFilter()}
}

// clientAddr is the caller's address as the hub sees it (the direct peer,
// or X-Forwarded-For from a trusted proxy).
func clientAddr(c *gin.Context) netip.Addr {
	a, err := netip.ParseAddr(c.ClientIP())
	if err != nil {
		return netip.IPv6Unspecified()
	}
	return a.Unmap()
}

type helloIn struct {
	Body wire.Hello `body:"json"`
}

func (s *Server) agentHello(c *gin.Context, in *helloIn) (wire.HelloResponse, error) {
	return s.deps.Fleet.Hello(c, enrollTokenOf(c), clientAddr(c), in.Body)
}

type telemetryIn struct {
	Body fleet.Batch `body:"json"`
}

func (s *Server) agentTelemetry(c *gin.Context, in *telemetryIn) (wire.TelemetryResponse, error) {
	return s.deps.Fleet.Telemetry(c, agentOf(c), clientAddr(c), in.Body)
}

type certIn struct {
	Body wire.CertRequest `body:"json"`
}

func (s *Server) agentCert(c *gin.Context, in *certIn) (wire.CertResponse, error) {
	return s.deps.Fleet.IssueCert(c, agentOf(c), in.Body.CSRPEM)
}

func (s *Server) listAgents(c *gin.Context, _ *router.NoInput) ([]fleet.AgentItem, error) {
	return s.deps.Fleet.ListAgents(c, callerOf(c).SiteFilter())
}

type agentIDIn struct {
	ID int64 `path:"id" min:"1" doc:"agent id"`
}

func (s *Server) agentDetail(c *gin.Context, in *agentIDIn) (fleet.AgentDetail, error) {
	return s.deps.Fleet.AgentDetail(c, callerOf(c).SiteFilter(), in.ID)
}

type agentHistoryIn struct {
	ID      int64 `path:"id" min:"1" doc:"agent id"`
	Minutes int   `query:"minutes" min:"1" max:"10080" default:"60" doc:"window ending now, in minutes (at most 7 days)"`
}

func (s *Server) agentHistory(c *gin.Context, in *agentHistoryIn) ([]AgentSample, error) {
	list, err := s.deps.Fleet.AgentHistory(c, callerOf(c).SiteFilter(), in.ID, in.Minutes)
	return convertAll(list, agentSampleOf), err
}

func (s *Server) deleteAgent(c *gin.Context, in *agentIDIn) (OKResult, error) {
	if err := s.deps.Fleet.DeleteAgent(c, actorOf(callerOf(c)), in.ID); err != nil {
		return OKResult{}, err
	}
	return OKResult{OK: true}, nil
}

type renameAgentIn struct {
	ID   int64 `path:"id" min:"1" doc:"agent id"`
	Body struct {
		Name string `json:"name" doc:"display name on the hub, 1-128 characters"`
	} `body:"json"`
}

func (s *Server) renameAgent(c *gin.Context, in *renameAgentIn) (fleet.AgentItem, error) {
	return s.deps.Fleet.RenameAgent(c, actorOf(callerOf(c)), in.ID, in.Body.Name)
}

func (s *Server) listEnrollTokens(c *gin.Context, _ *router.NoInput) ([]fleet.EnrollTokenItem, error) {
	return s.deps.Fleet.ListEnrollTokens(c, actorOf(callerOf(c)))
}

type createEnrollTokenIn struct {
	Body fleet.EnrollTokenCreate `body:"json"`
}

func (s *Server) createEnrollToken(c *gin.Context, in *createEnrollTokenIn) (fleet.EnrollTokenCreated, error) {
	return s.deps.Fleet.CreateEnrollToken(c, actorOf(callerOf(c)), in.Body)
}

type enrollTokenIDIn struct {
	ID int64 `path:"id" min:"1" doc:"enroll token id"`
}

func (s *Server) revokeEnrollToken(c *gin.Context, in *enrollTokenIDIn) (fleet.EnrollTokenItem, error) {
	return s.deps.Fleet.RevokeEnrollToken(c, actorOf(callerOf(c)), in.ID)
}

// telemetryBodyTimeout is how long an agent may take to send a telemetry
// body (up to 4 MiB): 60 s allows a link of 70 KB/s.
const telemetryBodyTimeout = 60 * time.Second
