package live

import (
	"cmp"
	"context"
	"log/slog"
	"slices"

	"netmon/capture"
	"netmon/capture/pcaprec"
	"netmon/capture/proc"
	"netmon/store/record"
)

// TickConnections caps the sockets of a tick: a busy host has thousands
// (2 676 made a 419 KB tick, sent every second to every client).
const TickConnections = 200

// Tick is the WebSocket message of spec 6.1.
type Tick struct {
	Type  string           `json:"type"`
	Stats capture.Snapshot `json:"stats"`
	// Connections are the host's most active sockets, at most
	// TickConnections (GET /api/connections has them all).
	Connections []proc.Connection `json:"connections"`
	// ConnectionsTotal is how many sockets the host has.
	ConnectionsTotal int `json:"connections_total"`
	// AlertEvents are the alert events stored since the previous tick
	// (always an array, empty when none).
	AlertEvents []AlertEvent `json:"alert_events"`
	Record      TickRecord   `json:"record"`
	// Fleet is the agents and NetFlow summary of the shared database
	// (FleetSummary), the client's site's; absent when the hub has no
	// fleet source or no read of it has succeeded yet.
	Fleet *FleetSummary `json:"fleet,omitempty"`
	// fleetSites are every site's summaries, from which ForSite picks.
	fleetSites *FleetSites
}

// AlertEvent is an alert of a tick (spec 6.1).
type AlertEvent struct {
	ID      int64  `json:"id"`
	TS      int64  `json:"ts"`
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	Message string `json:"message"`
	// Site is the event's site ("" the hub's): not sent, it decides who
	// gets the event (ForSite).
	Site string `json:"-"`
}

// ForSite is the tick as an identity bound to site sees it: the alert
// events of that site only, exactly as GET /api/v1/alerts/events filters
// them, and its site's fleet summary (its agents, its devices' flows, as
// GET /api/v1/agents and /api/v1/flows scope them); "" (an identity of
// every site) sees all. Stats, connections and the recording are the
// hub's own, which REST shows every signed-in identity (GET /api/status,
// /api/connections), so they are shared.
func (t Tick) ForSite(site string) any {
	if site == "" {
		return t
	}
	if t.fleetSites != nil {
		s := t.fleetSites.For(site)
		t.Fleet = &s
	}
	mine := make([]AlertEvent, 0, len(t.AlertEvents))
	for _, e := range t.AlertEvents {
		if e.Site == site {
			mine = append(mine, e)
		}
	}
	t.AlertEvents = mine
	return t
}

// TickRecord is the recording part of a tick.
type TickRecord struct {
	Recording bool  `json:"recording"`
	Packets   int64 `json:"packets"`
	Bytes     int64 `json:"bytes"`
}

// Capture is what a tick reads of the hub-local capture (*capture.Capture).
type Capture interface {
	Snapshot() capture.Snapshot
	RecordStatus() pcaprec.Status
}

// AlertSource hands over the alert events stored since its previous call
// (*alerting.Engine).
type AlertSource interface {
	Drain() []record.AlertEvent
}

// Ticker computes ticks from the capture and the connection inventory: the
// TickSource of the hub's feed.
type Ticker struct {
	log     *slog.Logger
	capture Capture
	conns   proc.Cacher
	geo     proc.Lookup
	alerts  AlertSource
	fleet   Fleet
}

// NewTicker returns the hub's tick source; geo may be nil, and alerts
// (nil: ticks carry no events).
func NewTicker(log *slog.Logger, c Capture, conns proc.Cacher, geo proc.Lookup, alerts AlertSource) *Ticker {
	return &Ticker{log: log, capture: c, conns: conns, geo: geo, alerts: alerts}
}

// SetFleet gives the ticks a fleet summary (nil, the default: no fleet
// field). Call it before the broker starts; pass a nil interface, not a
// nil *FleetSource.
func (t *Ticker) SetFleet(f Fleet) { t.fleet = f }

// Tick computes one tick. A failed socket listing sends the tick without
// connections rather than no tick.
func (t *Ticker) Tick(ctx context.Context) (any, error) {
	conns, err := proc.Inventory(ctx, t.conns, t.geo)
	if err != nil {
		t.log.Debug("tick without connections", "error", err)
		conns = []proc.Connection{}
	}
	rs := t.capture.RecordStatus()
	alerts := []AlertEvent{}
	if t.alerts != nil {
		for _, e := range t.alerts.Drain() {
			alerts = append(alerts, AlertEvent{ID: e.ID, TS: e.TS, Kind: e.Kind, Key: e.Key, Message: e.Message, Site: e.Site})
		}
	}
	tick := Tick{
		Type: "tick", Stats: t.capture.Snapshot(), Connections: topConnections(conns, TickConnections), ConnectionsTotal: len(conns),
		AlertEvents: alerts,
		Record:      TickRecord{Recording: rs.Recording, Packets: rs.Packets, Bytes: rs.Bytes},
	}
	if t.fleet != nil {
		if sites := t.fleet.Fleet(ctx); sites != nil {
			tick.fleetSites = sites
			all := sites.All
			tick.Fleet = &all
		}
	}
	return tick, nil
}

// topConnections keeps the n most active sockets: established ones first,
// then those standing for more identical sockets (count), then those with
// a remote end; ties in address order, so the list does not shuffle
// between ticks.
func topConnections(cs []proc.Connection, n int) []proc.Connection {
	if len(cs) <= n {
		return cs
	}
	rank := func(c proc.Connection) int {
		switch {
		case c.Status == "ESTABLISHED":
			return 0
		case c.RemoteAddr != "" && c.RemoteAddr != "*:*" && c.Status != "LISTEN":
			return 1
		}
		return 2
	}
	out := slices.Clone(cs)
	slices.SortStableFunc(out, func(a, b proc.Connection) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(b.Count, a.Count),
			cmp.Compare(a.RemoteAddr, b.RemoteAddr), cmp.Compare(a.LocalAddr, b.LocalAddr))
	})
	return out[:n]
}
