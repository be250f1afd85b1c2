package hub

import (
	"fmt"

	"netmon/app/live"
	"netmon/app/panics"
	"netmon/capture"
	"netmon/capture/pcaprec"
	"netmon/capture/proc"
	"netmon/collectors/geo"
)

// buildCapture builds GeoIP, the hub-local capture with its recorder
// (its minutes and its interface kept by the store) and the socket
// lister.
func (h *Hub) buildCapture() error {
	h.geo = geo.New(h.log.With("component", "geo"), h.cfg.Geo, geo.Deps{Registerer: h.reg, Guard: h.netGuard})
	h.parts.add("geo", h.geo.Start, noCtx(h.geo.Stop))

	h.capture = capture.New(h.log.With("component", "capture"), h.cfg.Capture, capture.Deps{
		Recorder: pcaprec.New(h.cfg.Record),
		Enrich:   h.geo,
		Minutes:  h.db,
		Panics:   panics.New(h.reg, h.log.With("component", "capture"), "capture"),
		Memory:   h.db,
	})
	if err := h.reg.Register(h.capture.Collector()); err != nil {
		return fmt.Errorf("capture metrics: %w", err)
	}
	h.parts.add("capture", h.capture.Start, noCtx(h.capture.Stop))

	h.conns = proc.NewLister()
	h.conns.Off = !h.cfg.Capture.HostConns
	return nil
}

// buildLive builds the live feed, which ticks from the capture, the
// socket lister, the alert engine and the fleet summary read from the
// shared database (the distributed tick, spec 6.1), and re-checks its
// clients through the auth service.
func (h *Hub) buildLive() {
	log := h.log.With("component", "live")
	ticker := live.NewTicker(log, h.capture, h.conns, h.geo, h.alerts)
	ticker.SetFleet(live.NewFleetSource(log, h.db, live.FleetConfig{Interval: h.cfg.Fleet.Interval}))
	h.live = live.New(log, h.cfg.Live, live.Deps{
		Source:   ticker,
		Sessions: h.auth.Sockets(),
		// The origin allow-list needs the bound port.
		AllowedOrigins: live.Origins(h.cfg.Server.PublicURL, h.cfg.TLS.Enabled, h.cfg.TLS.Hosts, h.port()),
		Registerer:     h.reg,
	})
	h.parts.add("live", h.live.Start, noCtx(h.live.Stop))
}
