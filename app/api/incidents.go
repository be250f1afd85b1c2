package api

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/alerting/incident"
	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/record"
)

// IncidentStore reads incidents and changes their state with the audit
// record (*store.DB).
type IncidentStore interface {
	ListIncidents(ctx context.Context, f store.IncidentFilter) ([]record.Incident, error)
	Incident(ctx context.Context, id int64) (record.Incident, error)
	IncidentEvents(ctx context.Context, id int64) ([]record.AlertEvent, error)
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

var errNoIncident = errs.NotFoundf("no such incident")

type incidentsIn struct {
	State   string `query:"state" enum:"open,ack,investigating,resolved,closed" doc:"only this state"`
	AgentID int64  `query:"agent" min:"0" doc:"only this agent's incidents (0: any; the hub's own are agent 0 and need no filter)"`
	Limit   int    `query:"limit" min:"1" max:"1000" default:"100" doc:"incidents, newest first"`
}

func (s *Server) listIncidents(c *gin.Context, in *incidentsIn) ([]Incident, error) {
	if s.deps.Incidents == nil {
		return []Incident{}, nil
	}
	list, err := s.deps.Incidents.ListIncidents(c, store.IncidentFilter{State: in.State, AgentID: in.AgentID, Limit: in.Limit, SiteScope: callerOf(c).SiteFilter()})
	return convertAll(list, incidentOf), err
}

// IncidentDetail is an incident with its member events (oldest first).
type IncidentDetail struct {
	Incident
	Events []AlertEvent `json:"events"`
}

func (s *Server) visibleIncident(c *gin.Context, id int64) (record.Incident, error) {
	if s.deps.Incidents == nil {
		return record.Incident{}, errNoIncident
	}
	inc, err := s.deps.Incidents.Incident(c, id)
	if errors.Is(err, store.ErrNotFound) {
		return inc, errNoIncident
	}
	if err != nil {
		return inc, err
	}
	if callerOf(c).Visible(inc.Site) != nil {
		// Another site's incident answers exactly as a missing one.
		return inc, errNoIncident
	}
	return inc, nil
}

func (s *Server) getIncident(c *gin.Context, in *idIn) (IncidentDetail, error) {
	inc, err := s.visibleIncident(c, in.ID)
	if err != nil {
		return IncidentDetail{}, err
	}
	evs, err := s.deps.Incidents.IncidentEvents(c, in.ID)
	return IncidentDetail{Incident: incidentOf(inc), Events: convertAll(evs, alertEventOf)}, err
}

// groupTicketNote: an incident is an alert group (its events' group_id).
const groupTicketNote = " An incident is an alert group (group_id of the events it first grouped): leaving the open states (resolve, or close while open) closes the group's ticket once (ticket channel)."

// incidentOp returns the handler of POST /api/v1/incidents/{id}/{op}:
// the move of the state machine and its audit record commit together.
func (s *Server) incidentOp(op string) func(*gin.Context, *idIn) (Incident, error) {
	move := func(c *gin.Context, in *idIn) (record.Incident, error) {
		inc, err := s.visibleIncident(c, in.ID)
		if err != nil {
			return inc, err
		}
		to, err := incident.Next(inc.State, op)
		if err != nil {
			return inc, err
		}
		who := callerOf(c)
		after := inc
		after.State, after.UpdatedTS = to, time.Now().Unix()
		if !record.IncidentIsOpen(to) && after.ClosedTS == 0 {
			after.ClosedTS = after.UpdatedTS
		}
		err = s.deps.Incidents.InTx(c, func(tx *store.Tx) error {
			if err := tx.SetIncidentState(c, inc.ID, to, after.UpdatedTS); err != nil {
				return err
			}
			rec := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
				audit.ActionIncidentPrefix+op, "incidents/"+strconv.FormatInt(inc.ID, 10), audit.ResultOK, "", inc, after)
			_, err := tx.AppendAudit(c, rec)
			return err
		})
		if errors.Is(err, store.ErrNotFound) {
			return inc, errNoIncident
		}
		if err != nil {
			return inc, err
		}
		// The incident is an alert group: leaving the open states
		// (resolved, or closed while open) closes its ticket, once.
		if s.deps.Notifier != nil && record.IncidentIsOpen(inc.State) && !record.IncidentIsOpen(to) {
			s.deps.Notifier.GroupResolved(inc.ID, after.UpdatedTS)
		}
		return s.deps.Incidents.Incident(c, inc.ID)
	}
	return func(c *gin.Context, in *idIn) (Incident, error) {
		inc, err := move(c, in)
		return incidentOf(inc), err
	}
}
