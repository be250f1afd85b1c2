// Package facts builds what the advisory assistant is told about a scope
// (issue 32, spec 2.8): the fleet, one agent, one incident, one alert
// event or one device, read from netmon's own store and turned into
// prompt.Facts. It owns the choice of facts, their wording and their
// priorities (so the context budget drops the least useful first), and
// the site rule of the assistant: a site-bound reader's facts are read
// within its site only, and an object of another site is not found,
// exactly like a missing one.
//
// Why a package of its own: the prompt layer (app/ai/prompt) must stay
// free of the store, and the conversation service must not know which
// tables answer which question. Every value copied from the network
// (host, DNS, SNI and process names, syslog and alert text, device
// strings, user names, addresses) is put in a fact's Data, never in its
// Text, which holds only netmon's own template words, numbers, times,
// ids and enumerations; every agent, device and user name read is
// registered in the conversation's pseudonyms before any fact is
// rendered, so the names are replaced in free text too.
package facts

import (
	"context"
	"errors"
	"strconv"
	"time"

	"netmon/app/ai"
	"netmon/app/ai/prompt"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/record"
)

// AgentStore reads agents and their telemetry.
type AgentStore interface {
	ListAgents(ctx context.Context, site string) ([]store.Agent, error)
	Agent(ctx context.Context, id int64) (store.Agent, error)
	AgentHistory(ctx context.Context, id, from int64) ([]store.AgentSample, error)
	AgentTrafficWindows(ctx context.Context, site string, agentIDs []int64, windows []store.TimeWindow) ([]store.AgentWindowTraffic, error)
	AgentNewNames(ctx context.Context, agentID, from, since int64, limit int) (procs, dests, domains []store.NewName, err error)
}

// DeepStore reads deep collection (processes, DNS, SNI/Host) and the
// minute series around an anomaly.
type DeepStore interface {
	TopProcesses(ctx context.Context, s store.DeepScope, limit int) ([]store.ProcessItem, error)
	TopL7(ctx context.Context, s store.DeepScope, limit int) ([]store.L7Item, error)
	TopDNS(ctx context.Context, s store.DeepScope, limit int) ([]store.DNSItem, error)
	RateMinutes(ctx context.Context, agentID, from, to int64) ([]store.RateMinute, error)
	DeepMinutes(ctx context.Context, agentID, from, to int64, procs, domains []string) (map[string][]store.SeriesMinute, error)
}

// AlertStore reads alert events and incidents.
type AlertStore interface {
	AlertEvent(ctx context.Context, id int64) (record.AlertEvent, error)
	OpenAlertCounts(ctx context.Context, q store.OpenAlertQuery) ([]store.AlertCount, error)
	TopOpenAlerts(ctx context.Context, q store.OpenAlertQuery, limit int) ([]record.AlertEvent, error)
	Incident(ctx context.Context, id int64) (record.Incident, error)
	IncidentEvents(ctx context.Context, id int64) ([]record.AlertEvent, error)
	OpenIncidents(ctx context.Context, site string, agentID int64, limit int) ([]record.Incident, int64, error)
}

// DeviceStore reads network devices and their samples.
type DeviceStore interface {
	Devices(ctx context.Context, site string) ([]store.Device, error)
	Device(ctx context.Context, id int64) (store.Device, error)
	DeviceIfaces(ctx context.Context, id, from int64) ([]record.IfaceSample, error)
	DeviceResources(ctx context.Context, id, from int64) ([]record.ResourceSample, error)
	DeviceVPN(ctx context.Context, id, from int64) ([]record.VPNSample, error)
	DeviceSDWAN(ctx context.Context, id, from int64) ([]record.SDWANSample, error)
	BusiestIfaces(ctx context.Context, site string, from int64, limit int) ([]store.DeviceIfaceUtil, error)
}

// FlowStore reads flow aggregates.
type FlowStore interface {
	FlowHostBytes(ctx context.Context, site string, windows []store.TimeWindow, hosts []string, limit int) ([]store.HostWindowBytes, error)
}

// TrafficStore reads the hub's own capture.
type TrafficStore interface {
	TrafficMinutes(ctx context.Context, from, to int64) ([]store.TrafficMinute, error)
}

// NameStore lists the host names netmon knows.
type NameStore interface {
	HostNames(ctx context.Context, site string) ([]string, error)
}

// Deps are the Builder's readers (each is *store.DB in the hub; see
// StoreDeps: every one is needed) and settings.
type Deps struct {
	Agents  AgentStore
	Deep    DeepStore
	Alerts  AlertStore
	Devices DeviceStore
	Flows   FlowStore
	Names   NameStore
	Traffic TrafficStore
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Interval is the agents' telemetry interval (default 30 s): an agent
	// is online when it sent telemetry within three of them, as the agent
	// list says.
	Interval time.Duration
	// Limit is the rows of each top list (default 10).
	Limit int
}

// StoreDeps is Deps reading db.
func StoreDeps(db *store.DB) Deps {
	return Deps{Agents: db, Deep: db, Alerts: db, Devices: db, Flows: db, Names: db, Traffic: db}
}

// Builder builds the facts of a scope: ai.FactSource.
type Builder struct {
	d Deps
}

var _ ai.FactSource = (*Builder)(nil)

// New returns a Builder over deps.
func New(deps Deps) *Builder {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Interval <= 0 {
		deps.Interval = 30 * time.Second
	}
	if deps.Limit <= 0 {
		deps.Limit = 10
	}
	return &Builder{d: deps}
}

// Windows of the facts.
const (
	hour = 3600
	day  = 86400
	// baselineDays is how many previous days' same hour make a baseline.
	baselineDays = 7
)

// Facts builds the facts of scope, registering the names it reads in ps.
func (b *Builder) Facts(ctx context.Context, scope ai.Scope, ps *prompt.Pseudonyms) ([]prompt.Fact, error) {
	if ps == nil {
		ps = prompt.New()
	}
	id, err := parseRef(scope)
	if err != nil {
		return nil, err
	}
	now := b.d.Now().Unix()
	l := &list{ps: ps, unbound: scope.Site == ""}
	switch scope.Kind {
	case ai.ScopeFleet:
		err = b.fleet(ctx, l, scope.Site, now)
	case ai.ScopeAgent:
		var a store.Agent
		if a, err = b.agent(ctx, scope.Site, id); err == nil {
			err = b.agentFacts(ctx, l, a, now, 0)
		}
	case ai.ScopeIncident:
		err = b.incident(ctx, l, scope.Site, id, now)
	case ai.ScopeAnomaly:
		err = b.anomaly(ctx, l, scope.Site, id, now)
	case ai.ScopeDevice:
		err = b.device(ctx, l, scope.Site, id, now)
	}
	if err != nil {
		return nil, err
	}
	// Every agent and device name the reader may see is registered, not
	// only the scope's: free text (an alert message, an interface alias)
	// names other hosts too.
	names, err := b.d.Names.HostNames(ctx, scope.Site)
	if err != nil {
		return nil, err
	}
	ps.AddHost(names...)
	return l.facts, nil
}

// Site returns the site of the scope's object ("" for fleet).
func (b *Builder) Site(ctx context.Context, scope ai.Scope) (string, error) {
	id, err := parseRef(scope)
	if err != nil {
		return "", err
	}
	switch scope.Kind {
	case ai.ScopeAgent:
		a, err := b.agent(ctx, scope.Site, id)
		return a.Site, err
	case ai.ScopeIncident:
		i, err := b.incidentOf(ctx, scope.Site, id)
		return i.Site, err
	case ai.ScopeAnomaly:
		e, err := b.eventOf(ctx, scope.Site, id)
		return e.Site, err
	case ai.ScopeDevice:
		d, err := b.deviceOf(ctx, scope.Site, id)
		return d.Site, err
	}
	return "", nil
}

// parseRef checks the scope kind and returns its object id (0 for fleet).
func parseRef(scope ai.Scope) (int64, error) {
	switch scope.Kind {
	case ai.ScopeFleet:
		if scope.Ref != "" {
			return 0, errs.InvalidField("scope_ref", "must be empty for the fleet scope")
		}
		return 0, nil
	case ai.ScopeAgent, ai.ScopeIncident, ai.ScopeAnomaly, ai.ScopeDevice:
		id, err := strconv.ParseInt(scope.Ref, 10, 64)
		if err != nil || id <= 0 {
			return 0, errs.InvalidField("scope_ref", "must be the id (a positive integer) of the %s", noun(scope.Kind))
		}
		return id, nil
	}
	return 0, errs.InvalidField("scope_kind", "must be one of fleet, agent, incident, anomaly, device")
}

func noun(kind string) string {
	if kind == ai.ScopeAnomaly {
		return "alert event"
	}
	return kind
}

// notFound is the answer for a missing object and for one of another
// site alike: the same text, so a site-bound reader learns nothing.
func notFound(kind string, id int64) error {
	return errs.NotFoundf("%s %d not found", noun(kind), id)
}

// visible turns a store miss, or a hit of another site, into notFound.
func visible(err error, site, objSite, kind string, id int64) error {
	if errors.Is(err, store.ErrNotFound) || (err == nil && site != "" && objSite != site) {
		return notFound(kind, id)
	}
	return err
}

func (b *Builder) agent(ctx context.Context, site string, id int64) (store.Agent, error) {
	a, err := b.d.Agents.Agent(ctx, id)
	return a, visible(err, site, a.Site, ai.ScopeAgent, id)
}

func (b *Builder) incidentOf(ctx context.Context, site string, id int64) (record.Incident, error) {
	i, err := b.d.Alerts.Incident(ctx, id)
	return i, visible(err, site, i.Site, ai.ScopeIncident, id)
}

func (b *Builder) eventOf(ctx context.Context, site string, id int64) (record.AlertEvent, error) {
	e, err := b.d.Alerts.AlertEvent(ctx, id)
	return e, visible(err, site, e.Site, ai.ScopeAnomaly, id)
}

func (b *Builder) deviceOf(ctx context.Context, site string, id int64) (store.Device, error) {
	d, err := b.d.Devices.Device(ctx, id)
	return d, visible(err, site, d.Site, ai.ScopeDevice, id)
}

// online is the agent list's rule: telemetry within three intervals.
func (b *Builder) online(a store.Agent, now int64) bool {
	return a.LastSeen > 0 && now-a.LastSeen <= int64(3*b.d.Interval/time.Second)
}

// baselineWindows are the hour ending at now, then the same hour on each
// of the previous baselineDays days.
func baselineWindows(now int64) []store.TimeWindow {
	ws := make([]store.TimeWindow, 0, baselineDays+1)
	for d := int64(0); d <= baselineDays; d++ {
		ws = append(ws, store.TimeWindow{From: now - hour - d*day, To: now - d*day})
	}
	return ws
}
