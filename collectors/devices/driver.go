package devices

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/collectors/fwrest"
	"netmon/collectors/snmp"
	"netmon/store/record"
)

// Driver is one way of polling a device (SNMP, the firewall REST API).
// The component owns the schedule, phase, backoff, state and metrics; a
// driver only polls one device when asked.
type Driver interface {
	// Name is the driver's label in metrics and logs ("snmp", "fwrest").
	Name() string
	// Handles reports whether d is polled by this driver.
	Handles(d record.Device) bool
	// Limits are the driver's bounds on the schedule.
	Limits() Limits
	// Open returns a new session for one device; it does no I/O.
	Open() Session
	// Probe polls d once without recording anything (POST
	// /api/v1/devices/probe).
	Probe(ctx context.Context, d record.Device) ProbeReport
}

// Session is one device's memory between polls (a kept connection,
// counters for rates). The scheduler uses it from one poll at a time and
// closes it when the device goes, the component stops or a poll panics.
type Session interface {
	// Poll polls d once and returns what to record (Err set on failure).
	Poll(ctx context.Context, d record.Device) (record.DevicePoll, error)
	Close()
}

// Limits bound a driver's schedule; zero values leave the component's.
type Limits struct {
	// MinInterval is the shortest poll interval (a poll_seconds under it
	// is raised to it).
	MinInterval time.Duration
	// MaxBackoff caps the wait before a failing device is polled again.
	MaxBackoff time.Duration
}

// ProbeEndpoint is one endpoint of a probe: for SNMP the system group,
// the interface tables, the host resources and the neighbour tables.
type ProbeEndpoint struct {
	Endpoint     string
	Connectivity bool
	HTTPCode     int
	Records      int
	Format       string
	Error        string
}

// ProbeReport is what a probe read.
type ProbeReport struct {
	OK        bool
	Error     string
	ElapsedMS int64
	Version   string // the device's sysDescr (SNMP) or firmware version (REST)
	SysName   string
	VDOMMode  string // REST devices only
	Endpoints []ProbeEndpoint
}

// snmpDriver is the SNMP driver behind Driver.
type snmpDriver struct{ d *snmp.Driver }

func newSNMP(cfg snmp.Config, control snmp.Control, reg prometheus.Registerer) snmpDriver {
	return snmpDriver{snmp.New(cfg, snmp.Deps{Control: control, Registerer: reg})}
}

func (snmpDriver) Name() string { return "snmp" }

// Handles: a device with a host and no vendor (an empty host is an
// unmanaged topology node, never polled).
func (snmpDriver) Handles(d record.Device) bool { return d.Host != "" && d.Vendor == "" }
func (snmpDriver) Limits() Limits               { return Limits{} }
func (s snmpDriver) Open() Session              { return s.d.Open() }

func (s snmpDriver) Probe(ctx context.Context, d record.Device) ProbeReport {
	r := s.d.Probe(ctx, d)
	format := "snmp-v" + d.SNMPVersion
	sys := r.SysName != "" || r.SysDescr != ""
	rep := ProbeReport{OK: r.OK, Error: r.Error, ElapsedMS: r.ElapsedMS, Version: r.SysDescr, SysName: r.SysName, Endpoints: []ProbeEndpoint{
		{Endpoint: "system", Connectivity: sys, Records: boolInt(sys), Format: format},
		{Endpoint: "interfaces", Connectivity: r.OK || r.Interfaces > 0, Records: r.Interfaces, Format: format},
		{Endpoint: "resources", Connectivity: r.OK, Records: boolInt(r.Resources), Format: format},
		{Endpoint: "neighbors", Connectivity: r.OK, Records: r.Neighbors, Format: format},
	}}
	if !r.OK {
		for i := range rep.Endpoints {
			if !rep.Endpoints[i].Connectivity {
				rep.Endpoints[i].Error = r.Error
			}
		}
	}
	return rep
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fwDriver is the firewall REST driver behind Driver (a pointer: its
// deps hold a func, and drivers are compared by name only).
type fwDriver struct {
	d     *fwrest.Driver
	cfg   fwrest.Config
	probe fwrest.Deps
}

func newFirewall(cfg fwrest.Config, transportFor func(apiURL string) *http.Transport, reg prometheus.Registerer) *fwDriver {
	deps := fwrest.Deps{TransportFor: transportFor}
	return &fwDriver{d: fwrest.NewDriver(cfg, deps, reg), cfg: cfg, probe: deps}
}

func (fwDriver) Name() string { return "fwrest" }

// Handles: a fwvendor device with an api_url.
func (fwDriver) Handles(d record.Device) bool { return d.Vendor == "fwvendor" && d.APIURL != "" }
func (f fwDriver) Limits() Limits {
	return Limits{MinInterval: fwrest.MinInterval, MaxBackoff: f.cfg.MaxBackoff}
}
func (f fwDriver) Open() Session { return f.d.Open() }

func (f fwDriver) Probe(ctx context.Context, d record.Device) ProbeReport {
	start := time.Now()
	r, err := fwrest.Probe(ctx, f.cfg, f.probe, d)
	rep := ProbeReport{OK: err == nil, ElapsedMS: time.Since(start).Milliseconds(), Version: r.Version, SysName: r.Hostname, VDOMMode: r.VDOMMode,
		Endpoints: make([]ProbeEndpoint, len(r.Endpoints))}
	if err != nil {
		rep.Error = err.Error()
	}
	for i, e := range r.Endpoints {
		rep.Endpoints[i] = ProbeEndpoint(e)
	}
	return rep
}

// errNoDriver: a device no driver polls (a vendor other than fwvendor
// never passes validation; an SNMP device without a host is refused
// before a probe).
var errNoDriver = errors.New("no driver polls this device")
