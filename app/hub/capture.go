package hub

import (
	"context"
	"errors"
	"fmt"

	"netmon/app/live"
	"netmon/app/panics"
	"netmon/capture"
	"netmon/capture/pcaprec"
	"netmon/capture/proc"
	"netmon/collectors/geo"
	"netmon/store"
)

// buildCapture builds GeoIP, the hub-local capture with its recorder, the
// socket lister and the live feed that ticks from them.
func (h *Hub) buildCapture() error {
	geoCfg := h.cfg.Geo
	geoCfg.Guard = h.netGuard
	h.geo = geo.New(h.log.With("component", "geo"), geoCfg, h.reg)
	h.parts.add("geo", h.geo.Start, noCtx(h.geo.Stop))

	h.capture = capture.New(h.log.With("component", "capture"), h.cfg.Capture, capture.Deps{
		Recorder: pcaprec.New(h.cfg.Record),
		Enrich:   h.geo,
		Minutes:  minuteSink{h.db},
		Panics:   panics.New(h.reg, h.log.With("component", "capture"), "capture"),
		Memory:   captureMemory{h.db},
	})
	if err := h.reg.Register(h.capture.Collector()); err != nil {
		return fmt.Errorf("capture metrics: %w", err)
	}
	h.parts.add("capture", h.capture.Start, noCtx(h.capture.Stop))

	h.conns = proc.NewLister()
	h.conns.Off = !h.cfg.Capture.HostConns
	// The origin allow-list needs the bound port.
	h.cfg.Live.AllowedOrigins = live.Origins(h.cfg.Server.PublicURL, h.cfg.TLS.Enabled, h.cfg.TLS.Hosts, h.port())
	// The engine, built later, hands the ticker its events (buildAlerts).
	h.ticker = live.NewTicker(h.log.With("component", "live"), h.capture, h.conns, h.geo)
	h.live = live.New(h.log.With("component", "live"), h.cfg.Live, h.ticker, liveSessions{h.auth}, h.reg)
	h.parts.add("live", h.live.Start, noCtx(h.live.Stop))
	return nil
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

// captureDeviceKey is the setting holding the running capture's interface
// ("" once a person stopped it), read at start to resume.
const captureDeviceKey = "capture.device"

// captureMemory keeps the capture's interface in the settings table.
type captureMemory struct{ db *store.DB }

func (m captureMemory) Remember(ctx context.Context, device string) error {
	return m.db.PutSetting(ctx, captureDeviceKey, device)
}

func (m captureMemory) Remembered(ctx context.Context) (string, error) {
	v, err := m.db.GetSetting(ctx, captureDeviceKey)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return v, err
}
