// Package agents is the fleet as operators see it (spec 2.9): the agent
// list, an agent's detail and history, renaming and deleting an agent,
// and the archive that deletes agents offline too long.
//
// It is its own package because it is the fleet's read side and its
// housekeeping: it reads what the intake stored and never takes part in
// enrollment or intake, which it only tells of a deleted agent (Roster).
// It imports the store for its entity types, the errs leaf, and the
// intake for the stored rates' type; audit records are built by the
// Auditor it is handed. app/fleet composes it.
package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"netmon/agentmode/wire"
	"netmon/app/errs"
	"netmon/app/fleet/intake"
	"netmon/store"
)

// AgentItem is an agent in the list (spec 2.9).
type AgentItem struct {
	ID              int64         `json:"id"`
	Name            string        `json:"name"`
	Site            string        `json:"site"`
	Online          bool          `json:"online" doc:"telemetry received within three intervals"`
	LastSeen        int64         `json:"last_seen"`
	Version         string        `json:"version"`
	RemoteIP        string        `json:"remote_ip"`
	OS              string        `json:"os"`
	Arch            string        `json:"arch"`
	ProtocolVersion int           `json:"protocol_version"`
	EnrolledAt      int64         `json:"enrolled_at"`
	AttrMethod      string        `json:"attr_method" enum:"ebpf,pcap,etw,off"`
	AttrIface       string        `json:"attr_iface"`
	AttrNote        string        `json:"attr_note"`
	Rates           []intake.Rate `json:"rates"`
	Conns           int           `json:"conns"`
	// Dropped is how many batches the agent reported discarding from its
	// full offline queue.
	Dropped      uint64 `json:"dropped"`
	CertNotAfter int64  `json:"cert_not_after" doc:"expiry of the last client certificate issued (0: none)"`
}

// AgentDetail is an agent with the connections of its last batch.
type AgentDetail struct {
	Agent       AgentItem         `json:"agent"`
	Connections []wire.Connection `json:"connections"`
}

func (s *Service) itemOfAgent(a store.Agent) AgentItem {
	it := AgentItem{ID: a.ID, Name: a.Name, Site: a.Site, LastSeen: a.LastSeen, Version: a.Version, RemoteIP: a.RemoteIP, OS: a.OS, Arch: a.Arch,
		ProtocolVersion: a.ProtocolVersion, EnrolledAt: a.EnrolledAt, AttrMethod: a.AttrMethod, AttrIface: a.AttrIface, AttrNote: a.AttrNote,
		Conns: a.Conns, Dropped: a.Dropped, CertNotAfter: a.CertNotAfter, Rates: []intake.Rate{}}
	it.Online = a.LastSeen > 0 && s.cfg.Now().Unix()-a.LastSeen <= int64(3*s.cfg.Interval/time.Second)
	_ = json.Unmarshal([]byte(a.Rates), &it.Rates)
	if it.Rates == nil {
		it.Rates = []intake.Rate{}
	}
	return it
}

// ListAgents lists the agents visible to a caller of site ("" = all).
func (s *Service) ListAgents(ctx context.Context, site string) ([]AgentItem, error) {
	as, err := s.db.ListAgents(ctx, site)
	if err != nil {
		return nil, err
	}
	out := make([]AgentItem, 0, len(as))
	for _, a := range as {
		out = append(out, s.itemOfAgent(a))
	}
	return out, nil
}

// visible returns agent id unless it belongs to another site than the
// caller's (then 404, as for an agent that does not exist).
func (s *Service) visible(ctx context.Context, site string, id int64) (store.Agent, error) {
	a, err := s.db.Agent(ctx, id)
	if err != nil {
		return store.Agent{}, storeErr(err)
	}
	if site != "" && a.Site != site {
		return store.Agent{}, errNotFound
	}
	return a, nil
}

// AgentDetail returns agent id with its last connections.
func (s *Service) AgentDetail(ctx context.Context, site string, id int64) (AgentDetail, error) {
	a, err := s.visible(ctx, site, id)
	if err != nil {
		return AgentDetail{}, err
	}
	d := AgentDetail{Agent: s.itemOfAgent(a), Connections: []wire.Connection{}}
	_ = json.Unmarshal([]byte(a.Connections), &d.Connections)
	if d.Connections == nil {
		d.Connections = []wire.Connection{}
	}
	return d, nil
}

// AgentHistory returns agent id's rates over the last minutes.
func (s *Service) AgentHistory(ctx context.Context, site string, id int64, minutes int) ([]store.AgentSample, error) {
	if _, err := s.visible(ctx, site, id); err != nil {
		return nil, err
	}
	return s.db.AgentHistory(ctx, id, s.cfg.Now().Unix()-int64(minutes)*60)
}

// DeleteAgent deletes agent id with its data (audited); its token and
// certificate stop working at once.
// A site-bound caller (callerSite != "") sees only its site's agents.
func (s *Service) DeleteAgent(ctx context.Context, by store.AuditActor, callerSite string, id int64) error {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		a, err := tx.DeleteAgent(ctx, id)
		if err != nil {
			return err
		}
		if callerSite != "" && a.Site != callerSite {
			return store.ErrNotFound // rolls back
		}
		_, err = tx.AppendAudit(ctx, s.auditor.Event(ctx, by, ActionAgentDelete, agentTarget(a), ResultOK, "", s.itemOfAgent(a), nil))
		return err
	})
	if err != nil {
		return storeErr(err)
	}
	s.roster.Forget(id)
	return nil
}

func agentTarget(a store.Agent) string { return fmt.Sprintf("agent:%d:%s", a.ID, a.Name) }

// RenameAgent sets agent id's display name on the hub (audited).
// A site-bound caller (callerSite != "") sees only its site's agents.
func (s *Service) RenameAgent(ctx context.Context, by store.AuditActor, callerSite string, id int64, name string) (AgentItem, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 128 {
		return AgentItem{}, &errs.Error{Kind: errs.Invalid, Field: "name", Msg: "name must be 1-128 characters"}
	}
	a, err := s.visible(ctx, callerSite, id)
	if err != nil {
		return AgentItem{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.RenameAgent(ctx, id, name); err != nil {
			return err
		}
		_, err := tx.AppendAudit(ctx, s.auditor.Event(ctx, by, ActionAgentUpdate, agentTarget(a), ResultOK, "",
			map[string]string{"name": a.Name}, map[string]string{"name": name}))
		return err
	})
	if err != nil {
		return AgentItem{}, storeErr(err)
	}
	a.Name = name
	return s.itemOfAgent(a), nil
}

// errNotFound answers an agent that does not exist or belongs to another
// site than the caller's.
var errNotFound = errs.NotFoundf("agent not found")

// storeErr turns the store's not found into errNotFound.
func storeErr(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errNotFound.Wrap(err)
	}
	return err
}
