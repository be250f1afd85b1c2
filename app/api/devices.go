package api

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/app/topology"
	"netmon/collectors/devices"
	"netmon/store"
	"netmon/store/record"
)

// Devices (spec 2.11, 4.8) and the topology (2.12, 4.10 uplinks). The
// device component (collectors/devices) owns the registry: validation,
// the credentials sealed by the vault, the poller picking a change up.
// These handlers bind, check the caller's scope and call it.

// DeviceService is the device registry (*devices.Component).
type DeviceService interface {
	List(ctx context.Context, site string) ([]devices.Item, error)
	Get(ctx context.Context, id int64) (devices.Item, error)
	Create(ctx context.Context, actor audit.Actor, in devices.Input) (devices.Item, error)
	Delete(ctx context.Context, actor audit.Actor, id int64) error
	Probe(ctx context.Context, in devices.Input) (devices.ProbeReport, error)
	Interfaces(ctx context.Context, id, from int64) ([]devices.Interface, error)
	IfaceHistory(ctx context.Context, id, ifIndex, from int64) ([]store.IfaceRate, error)
	Resources(ctx context.Context, id, from int64) ([]record.ResourceSample, error)
	VPN(ctx context.Context, id, from int64) ([]record.VPNSample, error)
	SDWAN(ctx context.Context, id, from int64) ([]record.SDWANSample, error)
	Policies(ctx context.Context, id, from int64) ([]record.PolicyDelta, error)
}

// DeviceStore keeps the uplinks of agents and devices (*store.DB).
type DeviceStore interface {
	Agent(ctx context.Context, id int64) (store.Agent, error)
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

// TopologyBuilder builds the graph a site sees (*topology.Service).
type TopologyBuilder interface {
	Build(ctx context.Context, site string) (topology.Topology, error)
}

// DeviceItem is a device of GET /api/v1/devices: exactly the fields of
// spec 2.11, credentials left out.
type DeviceItem struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Host        string `json:"host"`
	Kind        string `json:"kind"`
	Site        string `json:"site"`
	SNMPVersion string `json:"snmp_version"`
	PollSeconds int    `json:"poll_seconds"`
	Enabled     bool   `json:"enabled"`
	SysName     string `json:"sys_name"`
	SysDescr    string `json:"sys_descr"`
	LastPoll    int64  `json:"last_poll"`
	LastError   string `json:"last_error"`
	// The firewall REST driver's (vendor fwvendor; empty otherwise).
	Vendor     string `json:"vendor"`
	APIProfile string `json:"api_profile" jsonschema:"description=the profile the latest poll used (auto resolved from the version)"`
	APIVersion string `json:"api_version" jsonschema:"description=the version the device reported"`
	APICaps    string `json:"api_caps" jsonschema:"description=the endpoints that answered the latest poll, comma-separated (status, resources, interfaces, vpn_ipsec, vpn_ssl, sdwan, policies)"`
}

// DeviceCreate is the body of POST /api/v1/devices and of the probe.
type DeviceCreate struct {
	Name         string `json:"name" jsonschema:"minLength=1,maxLength=200"`
	Host         string `json:"host" jsonschema:"description=address[:port] (161 by default); empty = an unmanaged topology node, never polled"`
	Kind         string `json:"kind" jsonschema:"description=switch (default), router, firewall, access-point, server, wireless-controller, load-balancer, other"`
	Site         string `json:"site" jsonschema:"description=forced to the caller's site for site-bound identities"`
	SNMPVersion  string `json:"snmp_version" jsonschema:"enum=1,enum=2c,enum=3,enum=,description=2c by default"`
	Community    string `json:"community" jsonschema:"description=v1/v2c community (public by default); stored sealed, never returned"`
	PollSeconds  int    `json:"poll_seconds" jsonschema:"description=10 to 86400; 60 by default (REST devices: at least 60)"`
	Enabled      *bool  `json:"enabled,omitempty" jsonschema:"description=true by default"`
	V3User       string `json:"v3_user"`
	V3AuthProto  string `json:"v3_auth_proto" jsonschema:"enum=SHA,enum=SHA256,enum=SHA512,enum=MD5,enum="`
	V3AuthPass   string `json:"v3_auth_pass" jsonschema:"description=stored sealed, never returned"`
	V3PrivProto  string `json:"v3_priv_proto" jsonschema:"enum=AES,enum=AES256,enum=DES,enum="`
	V3PrivPass   string `json:"v3_priv_pass" jsonschema:"description=stored sealed, never returned"`
	Vendor       string `json:"vendor" jsonschema:"description=fwvendor: the firewall REST driver instead of SNMP"`
	APIURL       string `json:"api_url"`
	APIToken     string `json:"api_token" jsonschema:"description=stored sealed, never returned"`
	APIVerifyTLS *bool  `json:"api_verify_tls,omitempty" jsonschema:"description=true by default; false accepts a self-signed certificate"`
	VDOM         string `json:"vdom"`
	Profile      string `json:"profile" jsonschema:"description=auto (default), 7.0, 7.2, 7.4, 7.6, default"`
}

func (s *Server) listDevices(c *gin.Context, _ *struct{}) ([]DeviceItem, error) {
	if s.deps.DeviceService == nil {
		return []DeviceItem{}, nil
	}
	list, err := s.deps.DeviceService.List(c, callerOf(c).SiteFilter())
	out := make([]DeviceItem, len(list))
	for i, d := range list {
		out[i] = DeviceItem(d)
	}
	return out, err
}

type deviceCreateIn struct {
	Body DeviceCreate `body:"json"`
}

func (s *Server) createDevice(c *gin.Context, in *deviceCreateIn) (DeviceItem, error) {
	if s.deps.DeviceService == nil {
		return DeviceItem{}, errs.Unavailablef(0, "devices are not available on this hub")
	}
	in.Body.Site = callerOf(c).PinSite(in.Body.Site)
	d, err := s.deps.DeviceService.Create(c, auditActor(c), devices.Input(in.Body))
	return DeviceItem(d), err
}

// errNoDevice answers a device that does not exist or is another site's.
var errNoDevice = devices.ErrNoDevice

// visibleDevice loads a device in the caller's scope.
func (s *Server) visibleDevice(c *gin.Context, id int64) (devices.Item, error) {
	if s.deps.DeviceService == nil {
		return devices.Item{}, errNoDevice
	}
	d, err := s.deps.DeviceService.Get(c, id)
	if err == nil && callerOf(c).Visible(d.Site) != nil {
		return d, errNoDevice
	}
	return d, err
}

func (s *Server) deleteDevice(c *gin.Context, in *idIn) (OKResult, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return OKResult{}, err
	}
	if err := s.deps.DeviceService.Delete(c, auditActor(c), in.ID); err != nil {
		return OKResult{}, err
	}
	return OKResult{OK: true}, nil
}

// ProbeEndpoint is one endpoint of a probe: for SNMP the system group,
// the interface tables, the host resources and the neighbour tables.
type ProbeEndpoint struct {
	Endpoint     string `json:"endpoint"`
	Connectivity bool   `json:"connectivity"`
	HTTPCode     int    `json:"http_code" jsonschema:"description=0 for SNMP"`
	Records      int    `json:"records" jsonschema:"description=values or rows parsed"`
	Format       string `json:"format" jsonschema:"description=snmp-v1, snmp-v2c, snmp-v3 or json"`
	Error        string `json:"error"`
}

// ProbeReport is the answer of POST /api/v1/devices/probe.
type ProbeReport struct {
	OK        bool            `json:"ok"`
	Error     string          `json:"error"`
	ElapsedMS int64           `json:"elapsed_ms"`
	Version   string          `json:"version" jsonschema:"description=the device's sysDescr (SNMP) or firmware version (REST)"`
	SysName   string          `json:"sys_name"`
	VDOMMode  string          `json:"vdom_mode" jsonschema:"description=REST devices only; empty for SNMP"`
	Endpoints []ProbeEndpoint `json:"endpoints"`
}

func (s *Server) probeDevice(c *gin.Context, in *deviceCreateIn) (ProbeReport, error) {
	if s.deps.DeviceService == nil {
		return ProbeReport{}, errs.Unavailablef(0, "the device poller is not available on this hub")
	}
	r, err := s.deps.DeviceService.Probe(c, devices.Input(in.Body))
	rep := ProbeReport{OK: r.OK, Error: r.Error, ElapsedMS: r.ElapsedMS, Version: r.Version, SysName: r.SysName, VDOMMode: r.VDOMMode,
		Endpoints: make([]ProbeEndpoint, len(r.Endpoints))}
	for i, e := range r.Endpoints {
		rep.Endpoints[i] = ProbeEndpoint(e)
	}
	return rep, err
}

type deviceWindowIn struct {
	ID      int64 `path:"id" min:"1" doc:"device id"`
	Minutes int   `query:"minutes" min:"1" max:"10080" default:"60" doc:"window in minutes ending now"`
}

// since is the window's start (Unix seconds).
func (in *deviceWindowIn) since() int64 {
	return time.Now().Add(-time.Duration(in.Minutes) * time.Minute).Unix()
}

// DeviceInterface is an interface sample of GET
// /api/v1/devices/{id}/interfaces with its status computed by the
// server (the console shows it as is).
type DeviceInterface struct {
	record.IfaceSample
	Status string `json:"status" jsonschema:"enum=down,enum=critical,enum=warning,enum=normal,description=down when not oper-up; else by the higher utilisation: critical from 90%; warning from 70%; normal below or with the speed unknown"`
}

func (s *Server) deviceInterfaces(c *gin.Context, in *deviceWindowIn) ([]DeviceInterface, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	list, err := s.deps.DeviceService.Interfaces(c, in.ID, in.since())
	out := make([]DeviceInterface, len(list))
	for i, f := range list {
		out[i] = DeviceInterface(f)
	}
	return out, err
}

type ifaceHistoryIn struct {
	ID      int64 `path:"id" min:"1" doc:"device id"`
	IfIndex int64 `path:"ifindex" min:"1" doc:"the interface's ifIndex"`
	Minutes int   `query:"minutes" min:"1" max:"10080" default:"60" doc:"window in minutes ending now"`
}

// since is the window's start (Unix seconds).
func (in *ifaceHistoryIn) since() int64 {
	return time.Now().Add(-time.Duration(in.Minutes) * time.Minute).Unix()
}

func (s *Server) deviceIfaceHistory(c *gin.Context, in *ifaceHistoryIn) ([]InterfaceRate, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	rows, err := s.deps.DeviceService.IfaceHistory(c, in.ID, in.IfIndex, in.since())
	return convertAll(rows, ifaceRateOf), err
}

func (s *Server) deviceResources(c *gin.Context, in *deviceWindowIn) ([]ResourceSample, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	rows, err := s.deps.DeviceService.Resources(c, in.ID, in.since())
	return convertAll(rows, resourceOf), err
}

// The firewall REST device's series (spec 4.8; an SNMP device has none
// and answers []): after the scope check, another site's device is a 404.

func (s *Server) deviceVPN(c *gin.Context, in *deviceWindowIn) ([]VPNSample, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	rows, err := s.deps.DeviceService.VPN(c, in.ID, in.since())
	return convertAll(rows, vpnOf), err
}

func (s *Server) deviceSDWAN(c *gin.Context, in *deviceWindowIn) ([]SDWANSample, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	rows, err := s.deps.DeviceService.SDWAN(c, in.ID, in.since())
	return convertAll(rows, sdwanOf), err
}

func (s *Server) devicePolicies(c *gin.Context, in *deviceWindowIn) ([]PolicyDelta, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	rows, err := s.deps.DeviceService.Policies(c, in.ID, in.since())
	return convertAll(rows, policyOf), err
}

func (s *Server) getTopology(c *gin.Context, _ *struct{}) (topology.Topology, error) {
	if s.deps.Topology == nil {
		return topology.Topology{GeneratedAt: time.Now().Unix(), Devices: []topology.DeviceNode{}, Agents: []topology.AgentNode{}, Links: []topology.Link{}}, nil
	}
	return s.deps.Topology.Build(c, callerOf(c).SiteFilter())
}

// UplinkBody is the body of PUT /api/v1/agents/{id}/uplink and
// /api/v1/devices/{id}/uplink.
type UplinkBody struct {
	DeviceID int64  `json:"device_id" jsonschema:"description=the access device the agent or device hangs off; 0 removes the uplink"`
	Port     string `json:"port" jsonschema:"maxLength=200,description=the access device's port (optional)"`
}

type uplinkIn struct {
	ID   int64      `path:"id" min:"1" doc:"agent or device id"`
	Body UplinkBody `body:"json"`
}

func (s *Server) agentUplink(c *gin.Context, in *uplinkIn) (OKResult, error) {
	if s.deps.Devices == nil {
		return OKResult{}, errs.NotFoundf("no such agent")
	}
	a, err := s.deps.Devices.Agent(c, in.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && callerOf(c).Visible(a.Site) != nil) {
		return OKResult{}, errs.NotFoundf("no such agent")
	}
	if err != nil {
		return OKResult{}, err
	}
	return s.setUplink(c, "agent", in)
}

func (s *Server) deviceUplink(c *gin.Context, in *uplinkIn) (OKResult, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return OKResult{}, err
	}
	if in.Body.DeviceID == in.ID {
		return OKResult{}, invalidField("device_id", "a device cannot be its own uplink")
	}
	return s.setUplink(c, "device", in)
}

// setUplink checks the uplink device is visible and commits the manual
// edge with its audit record (topology.uplink).
func (s *Server) setUplink(c *gin.Context, kind string, in *uplinkIn) (OKResult, error) {
	if len(in.Body.Port) > 200 {
		return OKResult{}, invalidField("port", "port must be at most 200 characters")
	}
	if in.Body.DeviceID != 0 {
		if _, err := s.visibleDevice(c, in.Body.DeviceID); err != nil {
			return OKResult{}, invalidField("device_id", "no such device: %d", in.Body.DeviceID)
		}
	}
	who := callerOf(c)
	err := s.deps.Devices.InTx(c, func(tx *store.Tx) error {
		if err := tx.SetUplink(c, kind, in.ID, in.Body.DeviceID, in.Body.Port, time.Now().Unix()); err != nil {
			return err
		}
		rec := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
			audit.ActionUplinkSet, kind+"s/"+strconv.FormatInt(in.ID, 10), audit.ResultOK, "", nil, in.Body)
		_, err := tx.AppendAudit(c, rec)
		return err
	})
	if err != nil {
		return OKResult{}, err
	}
	return OKResult{OK: true}, nil
}
