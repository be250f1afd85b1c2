// Package procview assembles the process detail of an agent (spec 2.9,
// 4.6 GET /api/v1/agents/{id}/processes/{name}; issue 17) from the deep
// collection aggregates: the summary, the remote destinations with their
// country and ASN, the live sockets of the agent's last batch, the names
// the process used (DNS, TLS SNI, HTTP Host) and a timeline with traffic
// spikes. It is a service apart from the handlers because the spike test
// (mean + 3 sigma over the window's minutes) and the grouping are logic
// worth testing without HTTP; the fleet-wide lists are plain store sums
// the API serves directly.
//
// It is an app service: app/api calls it, app/hub hands it the store and
// the geo lookup through the small interfaces below.
package procview

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/netip"
	"slices"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/record"
)

// Store is what the detail reads; *store.DB implements it.
type Store interface {
	Agent(ctx context.Context, id int64) (store.Agent, error)
	ProcessMinutes(ctx context.Context, agent int64, process string, from int64) ([]store.ProcessMinute, error)
	ProcessDestinations(ctx context.Context, agent int64, process string, from int64) ([]store.ProcessDestination, error)
	ProcessNames(ctx context.Context, agent int64, process string, from int64) ([]store.ProcessName, error)
	UnattributedReasons(ctx context.Context, agent int64, from int64) ([]store.UnattributedReason, error)
	ListAlertEvents(ctx context.Context, f store.AlertFilter) ([]record.AlertEvent, error)
}

// MaxRelatedAlerts bounds timeline.related_alerts (newest first).
const MaxRelatedAlerts = 20

// Geo gives the country and ASN of an address (collectors/geo); nil when
// the hub has no GeoIP source.
type Geo interface {
	Lookup(addr netip.Addr) (country, asn string, ok bool)
}

// Unattributed is the process name of the bytes an agent could not tie to
// a process.
const Unattributed = "(unattributed)"

// Detail is the process detail.
type Detail struct {
	AgentID int64  `json:"agent_id"`
	Process string `json:"process"`
	// Minutes is the window the aggregates cover, ending now.
	Minutes int     `json:"minutes" jsonschema_description:"window of the aggregates, in minutes ending now"`
	Summary Summary `json:"summary"`
	// Reasons is the breakdown of (unattributed) bytes by reason; empty
	// for a named process.
	Reasons      []Reason      `json:"unattributed_reasons" jsonschema_description:"for (unattributed): bytes by the reason the agent gave, most first; empty otherwise"`
	Destinations []Destination `json:"destinations" jsonschema_description:"remote ends of the process's traffic over the window, grouped by remote ip, port and proto, most bytes first"`
	// Connections are the process's sockets in the agent's last batch.
	Connections []wire.Connection `json:"connections" jsonschema_description:"live: the process's sockets in the agent's last telemetry batch"`
	// Names are the DNS names and SNI/Host values the process used.
	Names    []Name   `json:"names" jsonschema_description:"application visibility: DNS names (kind dns) and TLS SNI / HTTP Host (kind tls, http) the process used"`
	Buckets  []Bucket `json:"buckets" jsonschema_description:"bytes per minute over the window, oldest first (minutes without traffic left out)"`
	Timeline Timeline `json:"timeline"`
}

// Name is a DNS name, TLS SNI or HTTP Host a process used
// (store.ProcessName, copied so that the store's row is not the API's).
type Name struct {
	// Kind is dns, tls or http.
	Kind string `json:"kind" jsonschema_description:"dns (a DNS query), tls (ClientHello SNI) or http (HTTP Host)"`
	Name string `json:"name" jsonschema_description:"the domain or host, stored as text"`
	// Count is queries (dns) or hits (tls, http).
	Count int64 `json:"count" jsonschema_description:"queries (dns) or connections carrying the name (tls, http)"`
	// Answers is DNS responses (0 for tls and http); Bytes the L7 bytes
	// (0 for dns).
	Answers   int64 `json:"answers"`
	Bytes     int64 `json:"bytes"`
	FirstSeen int64 `json:"first_seen"`
	LastSeen  int64 `json:"last_seen"`
}

// Reason is the bytes of (unattributed) under one reason the agent gave
// (store.UnattributedReason).
type Reason struct {
	Reason  string `json:"reason" jsonschema_description:"as the agent reported it (socket not found, process gone, other network namespace, kernel socket ...)"`
	Bytes   int64  `json:"bytes"`
	Packets int64  `json:"packets"`
}

// Summary sums the process over the window.
type Summary struct {
	FirstSeen int64   `json:"first_seen" jsonschema_description:"start of the first minute with traffic in the window, Unix seconds (0: none)"`
	LastSeen  int64   `json:"last_seen" jsonschema_description:"start of the last minute with traffic, Unix seconds (0: none)"`
	PIDs      []int32 `json:"pids" jsonschema_description:"distinct PIDs seen in the window, ascending"`
	BytesIn   int64   `json:"bytes_in"`
	BytesOut  int64   `json:"bytes_out"`
	Total     int64   `json:"total"`
	// LastRate is the last minute's bytes per second, both directions.
	LastRate float64 `json:"last_bucket_bps" jsonschema_description:"bytes per second of the last minute with traffic (in + out over 60 s)"`
}

// Destination is a remote end with its GeoIP.
type Destination struct {
	store.ProcessDestination
	Country string `json:"country" jsonschema_description:"ISO 3166 alpha-2 of the remote ip when known"`
	ASN     string `json:"asn" jsonschema_description:"autonomous system of the remote ip when known"`
}

// Bucket is one minute of the process.
type Bucket struct {
	TS       int64 `json:"ts"`
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
}

// Timeline is what happened to the process over the window.
type Timeline struct {
	FirstSeen int64 `json:"first_seen" jsonschema_description:"first minute with traffic (0: none)"`
	FirstDNS  int64 `json:"first_dns" jsonschema_description:"first minute with a DNS query of the process (0: none)"`
	FirstL7   int64 `json:"first_l7" jsonschema_description:"first minute with a TLS SNI or HTTP Host of the process (0: none)"`
	// Spikes are the minutes whose bytes exceed mean + 3 sigma.
	Spikes []Spike `json:"spikes" jsonschema_description:"minutes whose bytes (in + out) exceed the window's mean + 3 sigma"`
	// Alerts are the alert events about this process on this agent.
	Alerts []RelatedAlert `json:"related_alerts" jsonschema_description:"alert events about the process on this agent (rules proc and port), newest first, at most 20, whatever the window"`
}

// Spike is one minute above mean + 3 sigma.
type Spike struct {
	TS    int64   `json:"ts"`
	Bytes int64   `json:"bytes"`
	Mean  float64 `json:"mean"`
	Sigma float64 `json:"sigma"`
}

// RelatedAlert is an alert event about the process.
type RelatedAlert struct {
	ID       int64  `json:"id"`
	TS       int64  `json:"ts"`
	Kind     string `json:"kind"`
	Severity int    `json:"severity"`
	State    string `json:"state"`
	Message  string `json:"message"`
}

// Get returns the detail of process name on agent id over the last
// minutes. A site-bound caller (site != "") gets not found for another
// site's agent; a process neither in the window nor in the last batch is
// not found.
func Get(ctx context.Context, db Store, geo Geo, site string, id int64, name string, minutes int, now time.Time) (Detail, error) {
	a, err := db.Agent(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && site != "" && a.Site != site) {
		return Detail{}, errs.NotFoundf("agent not found")
	}
	if err != nil {
		return Detail{}, err
	}
	from := now.Unix() - int64(minutes)*60
	ms, err := db.ProcessMinutes(ctx, id, name, from)
	if err != nil {
		return Detail{}, err
	}
	dests, err := db.ProcessDestinations(ctx, id, name, from)
	if err != nil {
		return Detail{}, err
	}
	names, err := db.ProcessNames(ctx, id, name, from)
	if err != nil {
		return Detail{}, err
	}
	d := Detail{AgentID: id, Process: name, Minutes: minutes, Reasons: []Reason{}, Destinations: []Destination{},
		Connections: liveConnections(a.Connections, name), Names: make([]Name, len(names)),
		Timeline: Timeline{Spikes: []Spike{}, Alerts: []RelatedAlert{}}}
	if len(ms) == 0 && len(dests) == 0 && len(names) == 0 && len(d.Connections) == 0 {
		return Detail{}, errs.NotFoundf("process %q not seen on agent %d in the last %d minutes", name, id, minutes)
	}
	for i, n := range names {
		d.Names[i] = Name(n)
	}
	d.Summary, d.Buckets = summarise(ms)
	if name == Unattributed {
		rs, err := db.UnattributedReasons(ctx, id, from)
		if err != nil {
			return Detail{}, err
		}
		for _, r := range rs {
			d.Reasons = append(d.Reasons, Reason(r))
		}
	}
	d.Timeline.FirstSeen = d.Summary.FirstSeen
	for _, n := range names {
		first := &d.Timeline.FirstL7
		if n.Kind == "dns" {
			first = &d.Timeline.FirstDNS
		}
		if *first == 0 || n.FirstSeen < *first {
			*first = n.FirstSeen
		}
	}
	d.Timeline.Spikes = spikes(d.Buckets)
	evs, err := db.ListAlertEvents(ctx, store.AlertFilter{AgentID: id, Process: name, Limit: MaxRelatedAlerts})
	if err != nil {
		return Detail{}, err
	}
	for _, e := range evs {
		d.Timeline.Alerts = append(d.Timeline.Alerts, RelatedAlert{ID: e.ID, TS: e.TS, Kind: e.Kind, Severity: e.Severity, State: e.State, Message: e.Message})
	}
	for _, dst := range dests {
		out := Destination{ProcessDestination: dst}
		if ip, err := netip.ParseAddr(dst.RemoteIP); err == nil && geo != nil {
			out.Country, out.ASN, _ = geo.Lookup(ip)
		}
		d.Destinations = append(d.Destinations, out)
	}
	return d, nil
}

// summarise sums the minute rows (ordered by ts) into the summary and the
// per-minute buckets.
func summarise(ms []store.ProcessMinute) (Summary, []Bucket) {
	s := Summary{PIDs: []int32{}}
	buckets := []Bucket{}
	for _, m := range ms {
		if len(buckets) == 0 || buckets[len(buckets)-1].TS != m.TS {
			buckets = append(buckets, Bucket{TS: m.TS})
		}
		b := &buckets[len(buckets)-1]
		b.BytesIn += m.BytesIn
		b.BytesOut += m.BytesOut
		s.BytesIn += m.BytesIn
		s.BytesOut += m.BytesOut
		if m.PID > 0 && !slices.Contains(s.PIDs, m.PID) {
			s.PIDs = append(s.PIDs, m.PID)
		}
	}
	slices.Sort(s.PIDs)
	s.Total = s.BytesIn + s.BytesOut
	if len(buckets) > 0 {
		s.FirstSeen, s.LastSeen = buckets[0].TS, buckets[len(buckets)-1].TS
		last := buckets[len(buckets)-1]
		s.LastRate = float64(last.BytesIn+last.BytesOut) / 60
	}
	return s, buckets
}

// spikes returns the buckets whose bytes exceed the mean + 3 sigma
// (population standard deviation) of all buckets. With fewer than two
// buckets, or no variation, there is none.
func spikes(buckets []Bucket) []Spike {
	out := []Spike{}
	if len(buckets) < 2 {
		return out
	}
	var sum, sq float64
	for _, b := range buckets {
		v := float64(b.BytesIn + b.BytesOut)
		sum += v
		sq += v * v
	}
	n := float64(len(buckets))
	mean := sum / n
	sigma := math.Sqrt(max(sq/n-mean*mean, 0))
	if sigma == 0 {
		return out
	}
	for _, b := range buckets {
		if v := b.BytesIn + b.BytesOut; float64(v) > mean+3*sigma {
			out = append(out, Spike{TS: b.TS, Bytes: v, Mean: mean, Sigma: sigma})
		}
	}
	return out
}

// liveConnections are the sockets of process name in an inventory (the
// agent row's JSON); sockets without a process belong to (unattributed).
func liveConnections(inventory, name string) []wire.Connection {
	var all []wire.Connection
	_ = json.Unmarshal([]byte(inventory), &all)
	out := []wire.Connection{}
	for _, c := range all {
		if c.Process == name || (c.Process == "" && name == Unattributed) {
			out = append(out, c)
		}
	}
	return out
}
