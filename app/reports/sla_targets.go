package reports

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"netmon/app/errs"
	"netmon/store"
)

// Scopes of an SLA target.
const (
	ScopeSite   = "site"   // the agents or devices of Site ("" every site)
	ScopeAgent  = "agent"  // one agent (AgentID)
	ScopeDevice = "device" // one device (DeviceID)
)

// Bounds of an SLA target.
const (
	SLANameMax        = 100  // characters of a target's name
	SLAWindowHoursMax = 2160 // 90 days
)

// slaMetricScopes lists each metric's allowed scopes: an agent reports
// uptime only; a device is polled (availability) and has interfaces
// (utilisation); packet drops are counted by the hub's capture alone.
var slaMetricScopes = map[string][]string{
	MetricAgentUptime:        {ScopeSite, ScopeAgent},
	MetricDeviceAvailability: {ScopeSite, ScopeDevice},
	MetricIfaceUtilP95:       {ScopeSite, ScopeDevice},
	MetricPacketDrop:         {ScopeSite},
}

// validateTarget checks in and returns it normalised (name trimmed,
// scope "" = site), or a 400 naming the first bad field.
func validateTarget(in SLATargetInput) (SLATargetInput, error) {
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" || utf8.RuneCountInString(in.Name) > SLANameMax {
		return in, errs.InvalidField("name", "1 to %d characters", SLANameMax)
	}
	scopes, ok := slaMetricScopes[in.Metric]
	if !ok {
		return in, errs.InvalidField("metric", "%q is not one of agent_uptime, device_availability, iface_util_p95, packet_drop", in.Metric)
	}
	if in.Scope == "" {
		in.Scope = ScopeSite
	}
	switch in.Scope {
	case ScopeSite, ScopeAgent, ScopeDevice:
	default:
		return in, errs.InvalidField("scope", "%q is not one of site, agent, device", in.Scope)
	}
	allowed := false
	for _, s := range scopes {
		allowed = allowed || s == in.Scope
	}
	if !allowed {
		return in, errs.InvalidField("scope", "metric %s is measured per %s, not per %s", in.Metric, strings.Join(scopes, " or "), in.Scope)
	}
	switch {
	case in.Scope == ScopeAgent && in.AgentID <= 0:
		return in, errs.InvalidField("agent_id", "required for scope agent")
	case in.Scope != ScopeAgent && in.AgentID != 0:
		return in, errs.InvalidField("agent_id", "only for scope agent")
	case in.Scope == ScopeDevice && in.DeviceID <= 0:
		return in, errs.InvalidField("device_id", "required for scope device")
	case in.Scope != ScopeDevice && in.DeviceID != 0:
		return in, errs.InvalidField("device_id", "only for scope device")
	case in.Metric == MetricPacketDrop && in.Site != "":
		return in, errs.InvalidField("site", "packet_drop measures the hub's capture, which belongs to no site")
	case len(in.Site) > 64:
		return in, errs.InvalidField("site", "at most 64 characters")
	case math.IsNaN(in.Threshold) || in.Threshold < 0 || in.Threshold > 100:
		return in, errs.InvalidField("threshold", "a percentage from 0 to 100")
	case in.WindowHours < 1 || in.WindowHours > SLAWindowHoursMax:
		return in, errs.InvalidField("window_hours", "1 to %d", SLAWindowHoursMax)
	}
	return in, nil
}

func targetOf(r store.SLATarget) SLATarget {
	return SLATarget{ID: r.ID, Name: r.Name, Metric: r.Metric, Scope: r.Scope, Site: r.Site, AgentID: r.AgentID, DeviceID: r.DeviceID,
		Threshold: r.Threshold, WindowHours: r.WindowHours, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy}
}

// CreateTarget validates and stores a target with its audit record
// (sla.target.create) in one transaction: when the record cannot be
// written, nothing is stored. An agent or device target takes the site of
// its agent or device; in.Site, when set (a site-bound caller's), must be
// that site, else the agent or device is "not found" exactly as a missing
// one.
func (s *SLA) CreateTarget(ctx context.Context, who store.AuditActor, in SLATargetInput) (SLATarget, error) {
	in, err := validateTarget(in)
	if err != nil {
		return SLATarget{}, err
	}
	site := in.Site
	switch in.Scope {
	case ScopeAgent:
		a, err := s.deps.Store.Agent(ctx, in.AgentID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && in.Site != "" && a.Site != in.Site) {
			return SLATarget{}, errs.InvalidField("agent_id", "no agent %d", in.AgentID)
		}
		if err != nil {
			return SLATarget{}, err
		}
		site = a.Site
	case ScopeDevice:
		d, err := s.deps.Store.Device(ctx, in.DeviceID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && in.Site != "" && d.Site != in.Site) {
			return SLATarget{}, errs.InvalidField("device_id", "no device %d", in.DeviceID)
		}
		if err != nil {
			return SLATarget{}, err
		}
		site = d.Site
	}
	row := store.SLATarget{Name: in.Name, Metric: in.Metric, Scope: in.Scope, Site: site, AgentID: in.AgentID, DeviceID: in.DeviceID,
		Threshold: in.Threshold, WindowHours: in.WindowHours, CreatedAt: s.deps.Now().Unix(), CreatedBy: who.Username}
	var out SLATarget
	err = s.deps.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if row.ID, err = tx.InsertSLATarget(ctx, row); err != nil {
			return err
		}
		out = targetOf(row)
		_, err = tx.AppendAudit(ctx, s.event(ctx, who, ActionSLATargetCreate, out.ID, out.Name, nil, out))
		return err
	})
	if err != nil {
		return SLATarget{}, err
	}
	return out, nil
}

// DeleteTarget deletes target id with its audit record (sla.target.delete)
// in one transaction. site != "" (a site-bound caller's) deletes only a
// target of that site: another site's id is the same 404 as a missing one.
func (s *SLA) DeleteTarget(ctx context.Context, who store.AuditActor, site string, id int64) error {
	err := s.deps.Store.InTx(ctx, func(tx *store.Tx) error {
		old, err := tx.DeleteSLATarget(ctx, site, id)
		if err != nil {
			return err
		}
		t := targetOf(old)
		_, err = tx.AppendAudit(ctx, s.event(ctx, who, ActionSLATargetDelete, t.ID, t.Name, t, nil))
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return errs.NotFoundf("SLA target %d not found", id)
	}
	return err
}

// event builds the audit record of a target change.
func (s *SLA) event(ctx context.Context, who store.AuditActor, action string, id int64, name string, before, after any) store.AuditEvent {
	target := "sla/targets/" + strconv.FormatInt(id, 10)
	if s.deps.Audit != nil {
		return s.deps.Audit.Event(ctx, who, action, target, "ok", name, before, after)
	}
	ev := store.AuditEvent{TS: s.deps.Now().Unix(), Username: who.Username, Role: who.Role, ActorType: who.ActorType,
		Action: action, Target: target, Detail: name, Result: "ok"}
	if before != nil {
		b, _ := json.Marshal(before)
		ev.BeforeJSON = string(b)
	}
	if after != nil {
		b, _ := json.Marshal(after)
		ev.AfterJSON = string(b)
	}
	return ev
}
