// Package snmp is the SNMP device poller (spec 1 capability 6, 2.11):
// SNMP v1/v2c/v3 over gosnmp, the system group, IF-MIB ifTable and
// ifXTable (64-bit counters, walked column-parallel with GETBULK),
// HOST-RESOURCES-MIB and UCD-SNMP resources, and the LLDP, CDP and ARP
// tables the topology is built from.
//
// Each device is polled every poll_seconds, first at a point of its
// interval drawn from its id (so 1 000 devices do not poll in the same
// second), by at most Concurrency workers. A device that does not answer
// is retried after its interval doubled per failure, up to MaxBackoff,
// and its last_error says why. The poller reads the device list through
// Targets and writes each poll through Writer; it imports only leaves.
package snmp

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
	"netmon/store/record"
)

// Targets lists the devices to poll, credentials unsealed (the hub reads
// the store and opens the vault).
type Targets interface {
	PollTargets(ctx context.Context) ([]record.Device, error)
}

// Writer records one poll (*store.DB).
type Writer interface {
	SaveDevicePoll(ctx context.Context, p record.DevicePoll) error
}

// Deps are the poller's collaborators.
type Deps struct {
	Targets Targets
	Writer  Writer
	// Control is the guarded dialer's socket hook (see Control); nil
	// allows every address.
	Control Control
	// Registerer takes the metrics; nil: not registered.
	Registerer prometheus.Registerer
}

// Poller is the component.
type Poller struct {
	log  *slog.Logger
	cfg  Config
	deps Deps
	m    *metrics
	now  func() time.Time
	// guard recovers a panic in one device's poll into that device's
	// last_error and netmon_panics_total{component="snmp"}.
	guard *panics.Guard

	mu      sync.Mutex
	devices map[int64]*devState
	perHost map[string]int // polls in flight per host:port
	latest  map[int64]latestPoll

	cancel context.CancelFunc
	done   chan struct{}
}

// devState is the schedule and rate memory of one device.
type devState struct {
	dev      record.Device
	next     time.Time
	failures int
	running  bool
	prev     *prevPoll
	lastTopo time.Time
	ifs      ifCache
	reset    bool   // forget prev and ifs before the next poll
	host     string // the host of the poll in flight (perHost's key)
	sess     devSession
	gone     bool // removed from the list while polled: close sess after
}

// New returns a poller; it does no work.
func New(log *slog.Logger, cfg Config, deps Deps) *Poller {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := DefaultConfig()
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = d.Concurrency
	}
	if cfg.PerHost <= 0 {
		cfg.PerHost = d.PerHost
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = d.Timeout
	}
	if cfg.DeviceTimeout <= 0 {
		cfg.DeviceTimeout = d.DeviceTimeout
	}
	if cfg.DefaultPollSeconds <= 0 {
		cfg.DefaultPollSeconds = d.DefaultPollSeconds
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = d.Refresh
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = d.MaxBackoff
	}
	if cfg.BulkVarbinds <= 0 {
		cfg.BulkVarbinds = d.BulkVarbinds
	}
	if cfg.MaxARP <= 0 {
		cfg.MaxARP = d.MaxARP
	}
	return &Poller{log: log, cfg: cfg, deps: deps, m: newMetrics(deps.Registerer), now: time.Now, devices: map[int64]*devState{}, perHost: map[string]int{}, latest: map[int64]latestPoll{},
		guard: panics.New(deps.Registerer, log, "snmp")}
}

// Start starts the scheduler and the workers (nothing when disabled).
func (p *Poller) Start() error {
	if !p.cfg.Enabled || p.deps.Targets == nil || p.deps.Writer == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go p.run(ctx)
	return nil
}

// Stop stops scheduling and waits for the polls under way.
func (p *Poller) Stop() error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	<-p.done
	return nil
}

// Refresh re-reads the device list at once (after a create or delete).
func (p *Poller) Refresh(ctx context.Context) error {
	list, err := p.deps.Targets.PollTargets(ctx)
	if err != nil {
		return err
	}
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[int64]bool{}
	for _, d := range list {
		if d.Host == "" || !d.Enabled || d.Vendor != "" {
			continue // unmanaged nodes and REST devices are not SNMP-polled
		}
		seen[d.ID] = true
		st := p.devices[d.ID]
		if st == nil {
			st = &devState{next: now.Add(p.phase(d))}
			p.devices[d.ID] = st
		} else if st.dev.Host != d.Host || st.dev.SNMPVersion != d.SNMPVersion {
			st.reset = true // another agent: its counters and tables are not comparable
		}
		st.dev = d
	}
	for id, st := range p.devices {
		if !seen[id] {
			if st.running {
				st.gone = true // its worker closes the session
			} else {
				st.sess.close()
			}
			delete(p.devices, id)
			delete(p.latest, id)
		}
	}
	p.m.devices.Set(float64(len(p.devices)))
	return nil
}

// interval is a device's poll interval.
func (p *Poller) interval(d record.Device) time.Duration {
	s := d.PollSeconds
	if s <= 0 {
		s = p.cfg.DefaultPollSeconds
	}
	return time.Duration(s) * time.Second
}

// phase is where in its interval a device is first polled: drawn from
// its id, so the polls of many devices spread evenly and stay put across
// restarts.
func (p *Poller) phase(d record.Device) time.Duration {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(d.ID >> (8 * i))
	}
	h.Write(b[:])
	iv := p.interval(d)
	return time.Duration(h.Sum64() % uint64(iv))
}

func (p *Poller) run(ctx context.Context) {
	defer close(p.done)
	work := make(chan *devState)
	var wg sync.WaitGroup
	for range p.cfg.Concurrency {
		wg.Go(func() {
			for st := range work {
				// pollDevice recovers a panic of the poll into the
				// device's last_error; this keeps the worker whatever else.
				_ = p.guard.Do(func() { p.pollDevice(ctx, st) })
			}
		})
	}
	defer p.closeSessions() // after the workers are done
	defer wg.Wait()
	defer close(work)
	// A panic in the schedule restarts it; the devices are the Poller's.
	p.guard.Keep(ctx.Done(), func() { p.schedule(ctx, work) })
}

func (p *Poller) schedule(ctx context.Context, work chan<- *devState) {
	if err := p.Refresh(ctx); err != nil {
		p.log.Warn("read devices", "error", err)
	}
	refresh := time.NewTicker(p.cfg.Refresh)
	defer refresh.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-refresh.C:
			if err := p.Refresh(ctx); err != nil {
				p.log.Warn("read devices", "error", err)
			}
		case <-tick.C:
			for _, st := range p.due() {
				select {
				case work <- st:
				case <-ctx.Done():
					return
				}
			}
		}
	}
}

// due marks and returns the devices whose time has come.
func (p *Poller) due() []*devState {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*devState
	for _, st := range p.devices {
		if !st.running && !now.Before(st.next) && p.perHost[st.dev.Host] < p.cfg.PerHost {
			st.running = true
			st.host = st.dev.Host
			p.perHost[st.host]++
			if now.Sub(st.next) > p.interval(st.dev) {
				p.m.late.Inc()
			}
			out = append(out, st)
		}
	}
	return out
}

// pollDevice polls one device, writes the result and schedules the next
// poll: one interval after this one was due (keeping its phase), or
// after the backoff when it failed.
func (p *Poller) pollDevice(ctx context.Context, st *devState) {
	p.mu.Lock()
	if st.reset {
		st.prev, st.ifs, st.reset = nil, ifCache{}, false
		st.sess.close()
	}
	dev, prev, due := st.dev, st.prev, st.next
	topo := p.now().Sub(st.lastTopo) >= p.cfg.TopologyEvery
	p.mu.Unlock()

	// st.ifs and st.sess are this worker's alone while st.running. A
	// panic in the poll (a decoder meeting a hostile agent's answer) is
	// this device's error; its session and caches start anew.
	var (
		res      record.DevicePoll
		prevNext *prevPoll
		err      error
	)
	if perr := p.guard.Do(func() { res, prevNext, err = p.poll(ctx, dev, prev, topo, &st.ifs, &st.sess) }); perr != nil {
		res, prevNext, err = record.DevicePoll{DeviceID: dev.ID, TS: p.now().Unix(), Err: perr.Error()}, nil, perr
		p.mu.Lock()
		st.reset = true
		p.mu.Unlock()
	}
	stopping := errors.Is(ctx.Err(), context.Canceled)
	if !stopping {
		if werr := p.deps.Writer.SaveDevicePoll(ctx, res); werr != nil {
			p.log.Warn("save device poll", "device", dev.ID, "error", werr)
		}
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	st.running = false
	if st.gone || stopping {
		st.sess.close()
	}
	if p.perHost[st.host]--; p.perHost[st.host] <= 0 {
		delete(p.perHost, st.host)
	}
	if stopping {
		return // a poll cut by Stop is neither recorded nor a failure
	}
	iv := p.interval(dev)
	now := p.now()
	if err != nil {
		st.failures++
		back := iv << min(st.failures-1, 16)
		st.next = now.Add(min(back, max(p.cfg.MaxBackoff, iv)))
		return
	}
	st.failures = 0
	st.prev = prevNext
	p.latest[dev.ID] = latestPoll{dev: dev, at: now, ifaces: res.Ifaces}
	if topo {
		st.lastTopo = now
	}
	st.next = due.Add(iv)
	if st.next.Before(now) {
		st.next = now.Add(iv / 10) // behind: catch up soon, not in a burst
	}
}

// poll runs one poll of dev and returns what to record and the rate
// memory for the next one.
func (p *Poller) poll(ctx context.Context, dev record.Device, prev *prevPoll, topo bool, cache *ifCache, sess *devSession) (record.DevicePoll, *prevPoll, error) {
	start := p.now()
	out := record.DevicePoll{DeviceID: dev.ID, TS: start.Unix()}
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DeviceTimeout)
	defer cancel()
	r, err := p.pollRaw(dctx, dev, topo, cache, sess)
	p.m.duration.Observe(p.now().Sub(start).Seconds())
	p.m.requests.Add(float64(r.requests))
	p.m.varbinds.Add(float64(r.varbinds))
	if err != nil {
		p.m.polls.WithLabelValues("error").Inc()
		out.Err = describe(err, dev.Host, p.cfg)
		return out, nil, err
	}
	p.m.polls.WithLabelValues("ok").Inc()
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
func (p *Poller) pollRaw(ctx context.Context, dev record.Device, topo bool, cache *ifCache, sess *devSession) (pollResult, error) {
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
func (p *Poller) diagnoseV3(ctx context.Context, dev record.Device) error {
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
func (p *Poller) Probe(ctx context.Context, dev record.Device) ProbeResult {
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

// State is a device's schedule as the poller sees it (tests, metrics).
type State struct {
	Next     time.Time
	Failures int
}

// DeviceState returns a device's schedule; false when not scheduled.
func (p *Poller) DeviceState(id int64) (State, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st, ok := p.devices[id]
	if !ok {
		return State{}, false
	}
	return State{Next: st.next, Failures: st.failures}, true
}

// latestPoll is a device's last successful poll, for the alert rules.
type latestPoll struct {
	dev    record.Device
	at     time.Time
	ifaces []record.IfaceSample
}

// IfaceRate is an interface's rate in its device's latest poll, with a
// trusted speed (the iface_util rule's input).
type IfaceRate struct {
	DeviceID   int64
	DeviceName string
	Site       string
	Iface      string
	SpeedBps   uint64  // bit/s
	RxBps      float64 // bytes/s
	TxBps      float64
}

// IfaceRates lists the interfaces with a utilisation (trusted speed,
// oper-up, a rate) of every device polled within its last three
// intervals: a device that stopped answering does not keep alerting on
// its last figures.
func (p *Poller) IfaceRates() []IfaceRate {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []IfaceRate
	for _, l := range p.latest {
		if now.Sub(l.at) > 3*p.interval(l.dev) {
			continue
		}
		for _, f := range l.ifaces {
			if f.RxUtilPct == nil {
				continue
			}
			out = append(out, IfaceRate{DeviceID: l.dev.ID, DeviceName: l.dev.Name, Site: l.dev.Site, Iface: f.Name, SpeedBps: f.SpeedBps, RxBps: f.RxBps, TxBps: f.TxBps})
		}
	}
	return out
}
