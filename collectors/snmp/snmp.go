// Package snmp is the SNMP driver of the device component
// (collectors/devices; spec 1 capability 6, 2.11): SNMP v1/v2c/v3 over
// gosnmp, the system group, IF-MIB ifTable and ifXTable (64-bit
// counters, walked column-parallel with GETBULK), HOST-RESOURCES-MIB and
// UCD-SNMP resources, and the LLDP, CDP and ARP tables the topology is
// built from.
//
// It polls one device when asked (Session.Poll) and keeps that device's
// memory between polls (its gosnmp session, counters for the rates);
// the schedule, phase, backoff and the device list are the device
// component's. It imports only leaves.
package snmp

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/store/record"
)

// Deps are the driver's collaborators.
type Deps struct {
	// Control is the guarded dialer's socket hook (see Control); nil
	// allows every address.
	Control Control
	// Registerer takes the metrics; nil: not registered.
	Registerer prometheus.Registerer
}

// Driver polls SNMP devices; the device component (collectors/devices)
// schedules it. It keeps no device list: each device's memory between
// polls is its Session.
type Driver struct {
	cfg  Config
	deps Deps
	m    *metrics
	now  func() time.Time
}

// New returns the driver; it does no work.
func New(cfg Config, deps Deps) *Driver {
	d := DefaultConfig()
	if cfg.Timeout <= 0 {
		cfg.Timeout = d.Timeout
	}
	if cfg.DeviceTimeout <= 0 {
		cfg.DeviceTimeout = d.DeviceTimeout
	}
	if cfg.BulkVarbinds <= 0 {
		cfg.BulkVarbinds = d.BulkVarbinds
	}
	if cfg.MaxARP <= 0 {
		cfg.MaxARP = d.MaxARP
	}
	return &Driver{cfg: cfg, deps: deps, m: newMetrics(deps.Registerer), now: time.Now}
}

// Session is one device's memory between polls: its kept gosnmp
// session, the counters of its previous poll (rates), the interface
// names cache and when its topology tables were last walked. It is used
// by one poll at a time.
type Session struct {
	d        *Driver
	dev      record.Device // the settings of the previous poll
	prev     *prevPoll
	lastTopo time.Time
	ifs      ifCache
	sess     devSession
}

// Open returns a new session; it does no I/O.
func (p *Driver) Open() *Session { return &Session{d: p} }

// Poll polls dev once over the session and returns what to record. A
// device whose address or version changed starts anew: another agent's
// counters and tables are not comparable.
func (s *Session) Poll(ctx context.Context, dev record.Device) (record.DevicePoll, error) {
	if s.dev.Host != dev.Host || s.dev.SNMPVersion != dev.SNMPVersion {
		s.prev, s.ifs = nil, ifCache{}
		s.sess.close()
	}
	s.dev = dev
	topo := s.d.now().Sub(s.lastTopo) >= s.d.cfg.TopologyEvery
	res, prev, err := s.d.poll(ctx, dev, s.prev, topo, &s.ifs, &s.sess)
	if err != nil {
		return res, err
	}
	s.prev = prev
	if topo {
		s.lastTopo = s.d.now()
	}
	return res, nil
}

// Close closes the kept gosnmp session (nil-safe).
func (s *Session) Close() {
	if s != nil {
		s.sess.close()
	}
}

// poll runs one poll of dev and returns what to record and the rate
// memory for the next one.
func (p *Driver) poll(ctx context.Context, dev record.Device, prev *prevPoll, topo bool, cache *ifCache, sess *devSession) (record.DevicePoll, *prevPoll, error) {
	start := p.now()
	out := record.DevicePoll{DeviceID: dev.ID, TS: start.Unix()}
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DeviceTimeout)
	defer cancel()
	r, err := p.pollRaw(dctx, dev, topo, cache, sess)
	p.m.requests.Add(float64(r.requests))
	p.m.varbinds.Add(float64(r.varbinds))
	if err != nil {
		out.Err = describe(err, dev.Host, p.cfg)
		return out, nil, err
	}
	at := float64(start.UnixNano()) / 1e9
	applyRates(prev, at, r.poll.UptimeCS, r.ifaces)
	r.poll.DeviceID, r.poll.TS = dev.ID, out.TS
	r.poll.Ifaces = samples(dev.ID, out.TS, r.ifaces)
	if res := r.poll.Resources; res != nil {
		res.DeviceID, res.TS = dev.ID, out.TS
		if res.CPUPct == nil && prev != nil {
			if pct, ok := cpuBetween(prev.cpu, r.cpu); ok {
				res.CPUPct = &pct
			}
		}
	}
	return r.poll, remember(at, r.poll.UptimeCS, r.ifaces, r.cpu), nil
}

// pollRaw reads the device over its kept session sess (opened when it
// has none; nil: a one-off session). A failed poll drops the session; one
// that failed on a kept session in a way a fresh one may cure is tried
// again at once on a fresh one.
func (p *Driver) pollRaw(ctx context.Context, dev record.Device, topo bool, cache *ifCache, sess *devSession) (pollResult, error) {
	g, reused, err := p.session(ctx, dev, sess)
	if err != nil {
		return pollResult{}, err
	}
	if sess == nil {
		defer g.Close()
	}
	r, err := pollOnce(g, p.cfg, topo, cache)
	if err != nil && sess != nil {
		sess.close()
		if reused && staleSession(err) && ctx.Err() == nil {
			if g, _, err = p.session(ctx, dev, sess); err != nil {
				return pollResult{}, err
			}
			r2, err2 := pollOnce(g, p.cfg, topo, cache)
			r2.requests += r.requests
			r2.varbinds += r.varbinds
			r, err = r2, err2
			if err != nil {
				sess.close()
			}
		}
	}
	if err != nil && dev.SNMPVersion == "3" && strings.Contains(err.Error(), "not authentic") {
		err = p.diagnoseV3(ctx, dev)
	}
	return r, err
}

// diagnoseV3 tells an unknown user from a wrong password. An agent
// answers a request it cannot authenticate with an unauthenticated
// report that gosnmp refuses ("not authentic") whatever the cause; asked
// again without authentication, it reports usmStatsUnknownUserNames only
// when the user does not exist.
func (p *Driver) diagnoseV3(ctx context.Context, dev record.Device) error {
	wrong := errReport{usmReports[".1.3.6.1.6.3.15.1.1.5.0"]}
	dev.V3AuthProto, dev.V3PrivProto = "", ""
	g, err := newSession(ctx, dev, p.cfg, p.deps.Control)
	if err != nil {
		return wrong
	}
	defer g.Close()
	pkt, err := g.Get([]string{oidSysName})
	if (err != nil && strings.Contains(err.Error(), "unknown username")) || errors.Is(checkReport(pkt), errReport{usmReports[".1.3.6.1.6.3.15.1.1.3.0"]}) {
		return errReport{usmReports[".1.3.6.1.6.3.15.1.1.3.0"]}
	}
	return wrong
}

// ProbeResult is one poll of a device that is not saved (POST
// /api/v1/devices/probe).
type ProbeResult struct {
	OK         bool   `json:"ok"`
	Error      string `json:"error"`
	ElapsedMS  int64  `json:"elapsed_ms"`
	SysName    string `json:"sys_name"`
	SysDescr   string `json:"sys_descr"`
	Interfaces int    `json:"interfaces"`
	Resources  bool   `json:"resources"`
	Neighbors  int    `json:"neighbors"`
	Requests   int    `json:"requests"`
	Varbinds   int    `json:"varbinds"`
}

// Probe polls dev once, topology tables included, and reports what it
// read; nothing is recorded.
func (p *Driver) Probe(ctx context.Context, dev record.Device) ProbeResult {
	start := p.now()
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DeviceTimeout)
	defer cancel()
	r, err := p.pollRaw(dctx, dev, true, nil, nil)
	out := ProbeResult{OK: err == nil, ElapsedMS: p.now().Sub(start).Milliseconds(), SysName: r.poll.SysName, SysDescr: r.poll.SysDescr,
		Interfaces: len(r.ifaces), Resources: r.poll.Resources != nil, Neighbors: len(r.poll.Neighbors), Requests: r.requests, Varbinds: r.varbinds}
	if err != nil {
		out.Error = describe(err, dev.Host, p.cfg)
	}
	return out
}
