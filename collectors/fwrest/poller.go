package fwrest

import (
	"context"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/panics"
	"netmon/store/record"
)

// Scheduled polling of the fwvendor devices (spec 2.11, 8): each device
// every max(poll_seconds, MinInterval), first at a point of its interval
// drawn from its id, one poll at a time per device through one client
// kept between polls (so the 150 ms spacing holds across polls too). A
// failed poll is retried after its interval doubled per failure, up to
// MaxBackoff, and recorded as the device's last_error.

// MinInterval is the shortest poll interval of a REST device (spec 8):
// a poll_seconds under it is raised to it.
const MinInterval = 60 * time.Second

// Targets lists the devices (credentials unsealed).
type Targets interface {
	PollTargets(ctx context.Context) ([]record.Device, error)
}

// Writer records one poll (*store.DB).
type Writer interface {
	SaveDevicePoll(ctx context.Context, p record.DevicePoll) error
}

// PollerDeps are the scheduled poller's collaborators.
type PollerDeps struct {
	Deps
	Targets Targets
	Writer  Writer
	// Refresh is how often the device list is re-read (30 s when 0).
	Refresh time.Duration
	// MaxBackoff caps the retry delay of a failing device (30 min when 0).
	MaxBackoff time.Duration
	// Registerer takes the metrics; nil: not registered.
	Registerer prometheus.Registerer
}

// Poller polls every enabled fwvendor device on its schedule.
type Poller struct {
	log  *slog.Logger
	cfg  Config
	deps PollerDeps
	m    *metrics
	now  func() time.Time
	// guard recovers a panic in one device's poll into that device's
	// last_error and netmon_panics_total{component="fwrest"}.
	guard *panics.Guard

	mu      sync.Mutex
	devices map[int64]*fwState

	cancel context.CancelFunc
	done   chan struct{}
	wg     sync.WaitGroup
}

type fwState struct {
	dev      record.Device
	client   *Client
	next     time.Time
	failures int
	running  bool
	prev     map[string]ifPrev // interface counters of the previous poll
	prevAt   time.Time
	latest   *Result // the latest successful poll (alert rules)
	latestAt time.Time
}

type ifPrev struct{ rx, tx uint64 }

// NewPoller returns a poller; it does no work.
func NewPoller(log *slog.Logger, cfg Config, deps PollerDeps) *Poller {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if deps.Refresh <= 0 {
		deps.Refresh = 30 * time.Second
	}
	if deps.MaxBackoff <= 0 {
		deps.MaxBackoff = 30 * time.Minute
	}
	return &Poller{log: log, cfg: cfg, deps: deps, m: newMetrics(deps.Registerer), now: time.Now, devices: map[int64]*fwState{},
		guard: panics.New(deps.Registerer, log, "fwrest")}
}

// Interval is a device's poll interval: poll_seconds, never under
// MinInterval.
func Interval(d record.Device) time.Duration {
	return max(time.Duration(d.PollSeconds)*time.Second, MinInterval)
}

// Start starts the schedule (nothing without targets or a writer).
func (p *Poller) Start() error {
	if p.deps.Targets == nil || p.deps.Writer == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel, p.done = cancel, make(chan struct{})
	go p.run(ctx)
	return nil
}

// Stop stops the schedule and waits for the polls under way.
func (p *Poller) Stop() error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	<-p.done
	p.wg.Wait()
	return nil
}

// Refresh re-reads the device list: fwvendor devices with an api_url
// and enabled are polled; a device whose address, token or options
// changed gets a new client and forgets its counters.
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
		if d.Vendor != "fwvendor" || d.APIURL == "" || !d.Enabled {
			continue
		}
		seen[d.ID] = true
		st := p.devices[d.ID]
		if st == nil {
			st = &fwState{next: now.Add(phase(d))}
			p.devices[d.ID] = st
		} else if st.dev.APIURL != d.APIURL || st.dev.APIToken != d.APIToken || st.dev.APIVerifyTLS != d.APIVerifyTLS || st.dev.VDOM != d.VDOM || st.dev.Profile != d.Profile {
			if st.client != nil && !st.running {
				st.client.Close()
			}
			st.client, st.prev = nil, nil
		}
		st.dev = d
	}
	for id, st := range p.devices {
		if !seen[id] {
			if st.client != nil && !st.running {
				st.client.Close()
			}
			delete(p.devices, id)
		}
	}
	p.m.devices.Set(float64(len(p.devices)))
	return nil
}

// phase spreads the first polls over the interval, stable per id.
func phase(d record.Device) time.Duration {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(d.ID >> (8 * i))
	}
	h.Write(b[:])
	return time.Duration(h.Sum64() % uint64(Interval(d)))
}

func (p *Poller) run(ctx context.Context) {
	defer close(p.done)
	// A panic in the schedule itself restarts it (the devices' state is
	// the Poller's, not the loop's).
	p.guard.Keep(ctx.Done(), func() { p.loop(ctx) })
}

func (p *Poller) loop(ctx context.Context) {
	if err := p.Refresh(ctx); err != nil {
		p.log.Warn("read devices", "error", err)
	}
	refresh := time.NewTicker(p.deps.Refresh)
	defer refresh.Stop()
	tick := time.NewTicker(time.Second)
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
			for _, id := range p.due() {
				// PollDevice recovers a panic of the poll into the device's
				// last_error; this one keeps the process up whatever else.
				p.wg.Go(func() { _ = p.guard.Do(func() { p.PollDevice(ctx, id) }) })
			}
		}
	}
}

// due returns the devices whose time has come.
func (p *Poller) due() []int64 {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int64
	for id, st := range p.devices {
		if !st.running && !now.Before(st.next) {
			out = append(out, id)
		}
	}
	return out
}

// PollDevice polls one known device now, records the poll and schedules
// the next one; false when the device is unknown or already polling.
func (p *Poller) PollDevice(ctx context.Context, id int64) bool {
	p.mu.Lock()
	st := p.devices[id]
	if st == nil || st.running {
		p.mu.Unlock()
		return false
	}
	st.running = true
	if st.client == nil {
		c, err := NewClient(p.cfg, p.deps.Deps, st.dev)
		if err != nil {
			st.running = false
			st.failures++
			st.next = p.now().Add(min(Interval(st.dev)<<min(st.failures-1, 16), max(p.deps.MaxBackoff, Interval(st.dev))))
			dev := st.dev
			p.mu.Unlock()
			p.m.polls.WithLabelValues("error").Inc() // no request was sent: no duration
			p.save(ctx, record.DevicePoll{DeviceID: dev.ID, TS: p.now().Unix(), Err: err.Error()})
			return true
		}
		c.m = p.m
		st.client = c
	}
	dev, client, prev, prevAt, due := st.dev, st.client, st.prev, st.prevAt, st.next
	p.mu.Unlock()

	start := p.now()
	pctx, cancel := context.WithTimeout(ctx, max(Interval(dev)-5*time.Second, 30*time.Second))
	// The duration on the monotonic clock, not p.now (a test's clock).
	began := time.Now()
	var (
		r   Result
		err error
	)
	// A panic in the poll (a decoder's, the device's answer being
	// hostile) is this device's error; the client is made anew.
	panicked := p.guard.Do(func() { r, err = client.Poll(pctx) })
	if panicked != nil {
		err = panicked
	}
	took := time.Since(began)
	cancel()
	stopping := ctx.Err() != nil
	if !stopping { // a poll cut by the hub's stop says nothing of the device
		p.m.duration.Observe(took.Seconds())
		if err != nil {
			p.m.polls.WithLabelValues("error").Inc()
		} else {
			p.m.polls.WithLabelValues("ok").Inc()
		}
	}
	out := record.DevicePoll{DeviceID: dev.ID, TS: start.Unix()}
	var cur map[string]ifPrev
	if err == nil {
		if perr := p.guard.Do(func() { cur = convert(&out, r, dev, prev, prevAt, start) }); perr != nil {
			err, panicked = perr, perr
			out = record.DevicePoll{DeviceID: dev.ID, TS: start.Unix()}
		}
	}
	if err != nil {
		out.Err = err.Error()
	}
	if !stopping {
		p.save(ctx, out)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	st.running = false
	if p.devices[id] != st || (panicked != nil && st.client == client) { // deleted meanwhile, or a client in an unknown state
		client.Close()
		if p.devices[id] == st {
			st.client, st.prev = nil, nil
		}
	}
	if p.devices[id] != st {
		return true
	}
	if stopping {
		return true
	}
	iv := Interval(dev)
	now := p.now()
	if err != nil {
		st.failures++
		st.next = now.Add(min(iv<<min(st.failures-1, 16), max(p.deps.MaxBackoff, iv)))
		return true
	}
	st.failures = 0
	st.prev, st.prevAt = cur, start
	st.latest, st.latestAt = &r, now
	st.next = due.Add(iv)
	if st.next.Before(now) {
		st.next = now.Add(iv / 10)
	}
	return true
}

func (p *Poller) save(ctx context.Context, out record.DevicePoll) {
	if err := p.deps.Writer.SaveDevicePoll(ctx, out); err != nil {
		p.log.Warn("save firewall poll", "device", out.DeviceID, "error", err)
	}
}

// convert fills a successful poll's record: the system group, interface
// samples with rates against the previous poll (a counter that went
// backwards gives 0, never a spike), resources and the REST series.
func convert(out *record.DevicePoll, r Result, dev record.Device, prev map[string]ifPrev, prevAt, at time.Time) map[string]ifPrev {
	out.SysName = r.Hostname
	out.SysDescr = strings.TrimSpace("fwvendor " + r.Model + " " + r.Version)
	cur := make(map[string]ifPrev, len(r.Ifaces))
	secs := at.Sub(prevAt).Seconds()
	for i, f := range r.Ifaces {
		s := record.IfaceSample{DeviceID: dev.ID, TS: out.TS, IfIndex: i + 1, Name: f.Name, Alias: f.Alias, Class: "ethernet",
			SpeedBps: uint64(f.SpeedMbps * 1e6), AdminUp: true, OperUp: f.Link,
			InOctets: f.RxBytes, OutOctets: f.TxBytes, InErrors: f.RxErrors, OutErrors: f.TxErrors}
		cur[f.Name] = ifPrev{f.RxBytes, f.TxBytes}
		if pv, ok := prev[f.Name]; ok && secs > 0 {
			if f.RxBytes >= pv.rx {
				s.RxBps = float64(f.RxBytes-pv.rx) / secs
			}
			if f.TxBytes >= pv.tx {
				s.TxBps = float64(f.TxBytes-pv.tx) / secs
			}
		}
		if s.OperUp && s.SpeedBps > 0 {
			rx, tx := s.RxBps*8/float64(s.SpeedBps)*100, s.TxBps*8/float64(s.SpeedBps)*100
			s.RxUtilPct, s.TxUtilPct = &rx, &tx
		}
		out.Ifaces = append(out.Ifaces, s)
	}
	if r.CPUPct != nil || r.MemPct != nil || r.DiskPct != nil || r.Sessions != nil {
		out.Resources = &record.ResourceSample{DeviceID: dev.ID, TS: out.TS, CPUPct: r.CPUPct, MemPct: r.MemPct, DiskPct: r.DiskPct, Sessions: r.Sessions}
	}
	fw := &record.FirewallPoll{Profile: r.Profile, Version: r.Version, Caps: strings.Join(r.Caps, ",")}
	for _, t := range r.Tunnels {
		fw.VPN = append(fw.VPN, record.VPNSample{TS: out.TS, Kind: "ipsec", VDOM: t.VDOM, Name: t.Name, Remote: t.RemoteGW, Status: t.Status, UptimeSec: t.UptimeSec, InBytes: t.InBytes, OutBytes: t.OutBytes})
	}
	for _, u := range r.SSLUsers {
		up := int64(0)
		if u.LoginTime > 0 && out.TS > u.LoginTime {
			up = out.TS - u.LoginTime
		}
		fw.VPN = append(fw.VPN, record.VPNSample{TS: out.TS, Kind: "ssl", VDOM: u.VDOM, Name: u.User, Remote: u.RemoteHost, Status: "up", UptimeSec: up})
	}
	for _, h := range r.Health {
		fw.SDWAN = append(fw.SDWAN, record.SDWANSample{TS: out.TS, VDOM: h.VDOM, Name: h.Name, Member: h.Member, Status: h.Status, LatencyMS: h.LatencyMS, JitterMS: h.JitterMS, LossPct: h.LossPct})
	}
	for _, pol := range r.Policies {
		fw.Policies = append(fw.Policies, record.PolicySample{TS: out.TS, VDOM: pol.VDOM, PolicyID: pol.PolicyID, HitCount: pol.HitCount, Bytes: pol.Bytes, Packets: pol.Packets, ActiveSessions: pol.ActiveSessions})
	}
	out.Firewall = fw
	return cur
}

// Latest is a device's latest successful poll, for the alert rules.
type Latest struct {
	Device record.Device
	At     time.Time
	Result Result
}

// LatestPolls lists each polled device's latest successful poll no
// older than maxAge (a device gone quiet is not judged on old data).
func (p *Poller) LatestPolls(maxAge time.Duration) []Latest {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Latest
	for _, st := range p.devices {
		if st.latest != nil && now.Sub(st.latestAt) <= maxAge {
			out = append(out, Latest{Device: st.dev, At: st.latestAt, Result: *st.latest})
		}
	}
	return out
}
