package hub

import (
	"context"
	"fmt"

	"netmon/app/api"
	"netmon/app/live"
	"netmon/capture"
	"netmon/capture/pcaprec"
	"netmon/capture/proc"
	"netmon/collectors/geo"
	"netmon/store"
)

// startCapture builds and starts GeoIP, the hub-local capture with its
// recorder, the socket lister and the live feed.
func (h *Hub) startCapture() error {
	cc := h.cfg.Capture
	gcfg := geo.DefaultConfig()
	gcfg.Dir, gcfg.Online = cc.GeoIPDir, cc.IPOnlineLookup
	if cc.IPOnlineURL != "" {
		gcfg.OnlineURL = cc.IPOnlineURL
	}
	h.geo = geo.New(h.log.With("component", "geo"), gcfg, h.reg)
	if err := h.geo.Start(); err != nil {
		return fmt.Errorf("geoip: %w", err)
	}
	rcfg := pcaprec.DefaultConfig()
	rcfg.Dir, rcfg.MaxBytes = cc.RecordDir, int64(cc.RecordMaxMB)<<20
	ccfg := capture.DefaultConfig()
	ccfg.Enabled = cc.Enabled
	h.capture = capture.New(h.log.With("component", "capture"), ccfg, capture.Deps{
		Recorder: pcaprec.New(rcfg),
		Enrich:   h.geo,
		Minutes:  minuteSink{h.db},
	})
	if err := h.capture.Start(); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if err := h.reg.Register(h.capture.Collector()); err != nil {
		return fmt.Errorf("capture metrics: %w", err)
	}
	h.conns = proc.NewLister()
	lcfg := live.DefaultConfig()
	lcfg.AllowedOrigins = h.liveOrigins()
	h.live = live.New(h.log.With("component", "live"), lcfg, ticker{h}, liveSessions{h}, h.reg)
	return h.live.Start()
}

// minuteSink writes the capture's finished minutes to the store.
type minuteSink struct{ db *store.DB }

func (s minuteSink) AddMinute(ctx context.Context, m capture.Minute) error {
	return s.db.AddTrafficMinute(ctx, store.TrafficMinute{
		TS: m.TS, InBytes: m.In, OutBytes: m.Out, LocalBytes: m.Local, Packets: m.Packets,
		PeakIn: m.PeakIn, PeakOut: m.PeakOut, Seconds: m.Seconds,
	})
}

func (s minuteSink) AddRemotes(ctx context.Context, ts int64, rs []capture.Remote) error {
	out := make([]store.RemoteBytes, 0, len(rs))
	for _, r := range rs {
		out = append(out, store.RemoteBytes{IP: r.IP, Country: r.Country, Bytes: r.Bytes})
	}
	return s.db.AddRemoteMinute(ctx, ts, out)
}

// Tick is the WebSocket message of spec 6.1.
type Tick struct {
	Type  string           `json:"type"`
	Stats capture.Snapshot `json:"stats"`
	// Connections are the host's most active sockets, at most
	// TickConnections (GET /api/connections has them all).
	Connections []api.Connection `json:"connections"`
	// ConnectionsTotal is how many sockets the host has.
	ConnectionsTotal int          `json:"connections_total"`
	AlertEvents      []AlertEvent `json:"alert_events"` // alerting arrives later: always []
	Record           TickRecord   `json:"record"`
}

// AlertEvent is an alert of a tick (spec 6.1).
type AlertEvent struct {
	ID      int64  `json:"id"`
	TS      int64  `json:"ts"`
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	Message string `json:"message"`
}

// TickRecord is the recording part of a tick.
type TickRecord struct {
	Recording bool  `json:"recording"`
	Packets   int64 `json:"packets"`
	Bytes     int64 `json:"bytes"`
}

// ticker computes ticks from the hub's components.
type ticker struct{ h *Hub }

func (t ticker) Tick(ctx context.Context) (any, error) {
	h := t.h
	conns, err := api.Connections(ctx, h.conns, h.geo)
	if err != nil {
		h.log.Debug("tick without connections", "error", err)
		conns = []api.Connection{}
	}
	rs := h.capture.RecordStatus()
	total := len(conns)
	return Tick{
		Type: "tick", Stats: h.capture.Snapshot(), Connections: topConnections(conns, TickConnections), ConnectionsTotal: total,
		AlertEvents: []AlertEvent{},
		Record:      TickRecord{Recording: rs.Recording, Packets: rs.Packets, Bytes: rs.Bytes},
	}, nil
}
