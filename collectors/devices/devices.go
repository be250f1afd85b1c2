// Package devices is the device component (spec 1 capability 6, 2.11):
// the registry of network devices (validation, credentials sealed by the
// vault, the poll targets) and the one poller of them all — one
// scheduler, phase, backoff, per-device state and metrics — with the way
// of talking to a device behind a small Driver interface: SNMP
// (collectors/snmp) and the firewall REST API (collectors/fwrest), each
// keeping its protocol code.
//
// Each device is polled every poll_seconds (never under its driver's
// MinInterval), first at a point of its interval drawn from its id (so
// 1 000 devices do not poll in the same second), by at most Concurrency
// workers and PerHost to one address. A device that does not answer is
// retried after its interval doubled per failure, up to MaxBackoff, and
// its last_error says why. Enabled is -poller: off, no device of any
// driver is polled (run it on one hub replica only).
//
// It sits beside the collectors but owns a resource, so it imports the
// store (its rows, the audit record committed with a change), app/audit
// and app/errs (the error kinds the API maps), and alerting/rules: it
// implements the alert engine's interface rates and firewall states.
package devices

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/netguard"
	"netmon/app/panics"
	"netmon/collectors/snmp"
	"netmon/store"
	"netmon/store/record"
)

// Store keeps devices and their polls (*store.DB).
type Store interface {
	Devices(ctx context.Context, site string) ([]store.Device, error)
	Device(ctx context.Context, id int64) (store.Device, error)
	DeviceIfaces(ctx context.Context, id, from int64) ([]record.IfaceSample, error)
	DeviceIfaceHistory(ctx context.Context, id, ifIndex, from int64) ([]store.IfaceRate, error)
	DeviceResources(ctx context.Context, id, from int64) ([]record.ResourceSample, error)
	DeviceVPN(ctx context.Context, id, from int64) ([]record.VPNSample, error)
	DeviceSDWAN(ctx context.Context, id, from int64) ([]record.SDWANSample, error)
	DevicePolicies(ctx context.Context, id, from int64) ([]record.PolicyDelta, error)
	SaveDevicePoll(ctx context.Context, p record.DevicePoll) error
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

// Sealer seals and opens device credentials (*vault.Vault).
type Sealer interface {
	Seal(plaintext, associatedData []byte) ([]byte, error)
	Open(blob, associatedData []byte) ([]byte, error)
}

// Deps are the component's collaborators (runtime, not configuration).
type Deps struct {
	Store Store
	// Vault seals credentials; nil: devices cannot be created and
	// sealed credentials do not open.
	Vault Sealer
	// Guard is the outbound guard every device connection goes through:
	// SNMP sockets by its hook for configured addresses, a REST device
	// by the guard made for its own api_url. nil allows every address
	// (tests).
	Guard *netguard.Guard
	// Registerer takes the metrics; nil: not registered.
	Registerer prometheus.Registerer
	// Drivers, when set (tests), replace SNMP and the firewall REST API.
	Drivers []Driver
	// IsLeader says whether this replica polls (the leader when several
	// hubs share a database); nil: always.
	IsLeader func() bool
}

// guardedTransport makes the transport of one REST device: the guard
// made for its api_url allows the address the URL names as an IP
// literal (configured); a host name must resolve to a public address or
// a range of -outbound-allow, and a metadata address never passes.
func guardedTransport(g *netguard.Guard) func(apiURL string) *http.Transport {
	return func(apiURL string) *http.Transport {
		ug, err := g.ForURL(apiURL)
		if err != nil {
			ug = g // the driver refuses the malformed URL with a clearer error
		}
		return ug.Transport(netguard.ClientOptions{})
	}
}

// Component is the device component.
type Component struct {
	log     *slog.Logger
	cfg     Config
	deps    Deps
	drivers []Driver
	guards  map[string]*panics.Guard // by driver name
	loop    *panics.Guard
	m       *metrics
	now     func() time.Time

	mu      sync.Mutex
	devices map[int64]*devState
	perHost map[string]int // polls in flight per address

	cancel context.CancelFunc
	done   chan struct{}
}

// devState is the schedule and memory of one device.
type devState struct {
	dev      record.Device
	drv      Driver
	sess     Session // nil until first polled, and after a panic
	next     time.Time
	failures int
	running  bool
	host     string // perHost's key of the poll in flight
	gone     bool   // removed while polled: its worker closes sess
	// latest is the last successful poll and when it ended (the alert
	// rules' input).
	latest   *record.DevicePoll
	latestAt time.Time
}

// New returns the component; it does no work.
func New(log *slog.Logger, cfg Config, deps Deps) *Component {
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
	if cfg.DefaultPollSeconds <= 0 {
		cfg.DefaultPollSeconds = d.DefaultPollSeconds
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = d.Refresh
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = d.MaxBackoff
	}
	drivers := deps.Drivers
	if drivers == nil {
		var (
			control      snmp.Control
			transportFor func(string) *http.Transport
		)
		if g := deps.Guard; g != nil {
			control, transportFor = g.ConfiguredControl, guardedTransport(g)
		}
		drivers = []Driver{newSNMP(cfg.SNMP, control, deps.Registerer), newFirewall(cfg.Firewall, transportFor, deps.Registerer)}
	}
	c := &Component{log: log, cfg: cfg, deps: deps, drivers: drivers, guards: map[string]*panics.Guard{},
		loop: panics.New(deps.Registerer, log, "devices"), m: newMetrics(deps.Registerer, drivers), now: time.Now,
		devices: map[int64]*devState{}, perHost: map[string]int{}}
	// A panic in one device's poll is counted under its driver's name,
	// as before the drivers shared a scheduler.
	for _, drv := range drivers {
		c.guards[drv.Name()] = panics.New(deps.Registerer, log, drv.Name())
	}
	return c
}

// Start starts the scheduler and the workers; nothing when disabled
// (-poller=false) or without a store.
func (c *Component) Start() error {
	if !c.cfg.Enabled || c.deps.Store == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel, c.done = cancel, make(chan struct{})
	go c.run(ctx)
	return nil
}

// Stop stops scheduling, waits for the polls under way and closes the
// devices' sessions.
func (c *Component) Stop() error {
	if c.cancel == nil {
		return nil
	}
	c.cancel()
	<-c.done
	return nil
}

// driverOf is the driver polling d; nil when none does.
func (c *Component) driverOf(d record.Device) Driver {
	for _, drv := range c.drivers {
		if drv.Handles(d) {
			return drv
		}
	}
	return nil
}

// Refresh re-reads the device list at once (the API calls it after a
// create or delete). Only a running poller keeps a schedule: with
// -poller=false it does nothing.
func (c *Component) Refresh(ctx context.Context) error {
	if c.cancel == nil {
		return nil
	}
	return c.refresh(ctx)
}

func (c *Component) refresh(ctx context.Context) error {
	list, err := c.PollTargets(ctx)
	if err != nil {
		return err
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[int64]bool{}
	for _, d := range list {
		drv := c.driverOf(d)
		if drv == nil || !d.Enabled {
			continue
		}
		seen[d.ID] = true
		st := c.devices[d.ID]
		if st != nil && st.drv.Name() != drv.Name() {
			c.drop(st) // another driver: a new session and schedule
			st = nil
		}
		if st == nil {
			st = &devState{drv: drv}
			st.dev = d
			st.next = now.Add(c.phase(d, drv))
			c.devices[d.ID] = st
		}
		st.dev = d
	}
	for id, st := range c.devices {
		if !seen[id] {
			c.drop(st)
			delete(c.devices, id)
		}
	}
	counts := map[string]int{}
	for _, st := range c.devices {
		counts[st.drv.Name()]++
	}
	for _, drv := range c.drivers {
		c.m.devices.WithLabelValues(drv.Name()).Set(float64(counts[drv.Name()]))
	}
	return nil
}

// drop forgets a device's session: closed now, or by its worker when a
// poll is in flight. Called with mu held.
func (c *Component) drop(st *devState) {
	if st.running {
		st.gone = true
		return
	}
	if st.sess != nil {
		st.sess.Close()
		st.sess = nil
	}
}
