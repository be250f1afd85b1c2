package api

import (
	"context"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/errs"
	"netmon/app/procview"
	"netmon/store"
)

// DeepStore reads what agents report of deep collection (issue 17):
// per-process traffic, L7 names and DNS names (*store.DB).
type DeepStore interface {
	procview.Store
	TopProcesses(ctx context.Context, s store.DeepScope, limit int) ([]store.ProcessItem, error)
	TopL7(ctx context.Context, s store.DeepScope, limit int) ([]store.L7Item, error)
	TopDNS(ctx context.Context, s store.DeepScope, limit int) ([]store.DNSItem, error)
	DeepEvents(ctx context.Context, typ string, s store.DeepScope, f store.EventFilter, after *store.EventCursor, limit int) ([]store.Event, error)
}

type processesIn struct {
	Minutes int   `query:"minutes" min:"1" max:"10080" default:"60" doc:"window ending now, in minutes (at most 7 days)"`
	AgentID int64 `query:"agent_id" min:"0" doc:"only this agent (0: all agents the caller may see)"`
	Limit   int   `query:"limit" min:"1" max:"1000" default:"20" doc:"rows to return"`
}

// namesIn is the query of the L7 and DNS lists (limit 30 by default).
type namesIn struct {
	Minutes int   `query:"minutes" min:"1" max:"10080" default:"60" doc:"window ending now, in minutes (at most 7 days)"`
	AgentID int64 `query:"agent_id" min:"0" doc:"only this agent (0: all agents the caller may see)"`
	Limit   int   `query:"limit" min:"1" max:"1000" default:"30" doc:"rows to return"`
}

// deepScope is the window and agents of a deep collection query: a
// site-bound caller sees its site's agents only.
func deepScope(c *gin.Context, minutes int, agentID int64) store.DeepScope {
	return store.DeepScope{From: time.Now().Add(-time.Duration(minutes) * time.Minute).Unix(), AgentID: agentID, Site: callerOf(c).SiteFilter()}
}

func (s *Server) processes(c *gin.Context, in *processesIn) ([]ProcessItem, error) {
	if s.deps.Deep == nil {
		return []ProcessItem{}, nil
	}
	list, err := s.deps.Deep.TopProcesses(c, deepScope(c, in.Minutes, in.AgentID), in.Limit)
	return convertAll(list, processItemOf), err
}

func (s *Server) l7(c *gin.Context, in *namesIn) ([]L7Item, error) {
	if s.deps.Deep == nil {
		return []L7Item{}, nil
	}
	list, err := s.deps.Deep.TopL7(c, deepScope(c, in.Minutes, in.AgentID), in.Limit)
	return convertAll(list, l7ItemOf), err
}

func (s *Server) dns(c *gin.Context, in *namesIn) ([]DNSItem, error) {
	if s.deps.Deep == nil {
		return []DNSItem{}, nil
	}
	list, err := s.deps.Deep.TopDNS(c, deepScope(c, in.Minutes, in.AgentID), in.Limit)
	return convertAll(list, dnsItemOf), err
}

type processDetailIn struct {
	ID      int64  `path:"id" min:"1" doc:"agent id"`
	Name    string `path:"name" doc:"process name as listed (URL-escaped); (unattributed) for the bytes not tied to a process"`
	Minutes int    `query:"minutes" min:"1" max:"10080" default:"1440" doc:"window of the aggregates, in minutes ending now"`
}

func (s *Server) processDetail(c *gin.Context, in *processDetailIn) (procview.Detail, error) {
	var geo procview.Geo
	if s.deps.Geo != nil {
		geo = s.deps.Geo
	}
	if s.deps.Deep == nil {
		return procview.Detail{}, errs.NotFoundf("agent not found")
	}
	return procview.Get(c, s.deps.Deep, geo, callerOf(c).SiteFilter(), in.ID, in.Name, in.Minutes, time.Now())
}

// deepEvents are the agent observations of GET /api/v1/events: each type
// of in.Type (all when empty) in the scope, after the cursor, each source
// already in the event order.
func (s *Server) deepEvents(c *gin.Context, in *eventsIn, f store.EventFilter, since int64, after *store.EventCursor) ([]store.Event, error) {
	if s.deps.Deep == nil || in.Device != "" || in.Exporter != "" {
		return nil, nil // agents are no device
	}
	scope := store.DeepScope{From: since, AgentID: in.AgentID, Site: callerOf(c).SiteFilter()}
	var out []store.Event
	for _, typ := range store.DeepEventTypes {
		if in.Type != "" && in.Type != typ {
			continue
		}
		es, err := s.deps.Deep.DeepEvents(c, typ, scope, f, after, in.Limit+1)
		if err != nil {
			return nil, err
		}
		out = append(out, es...)
	}
	return out, nil
}
