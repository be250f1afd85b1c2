package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/app/topology"
	"netmon/collectors/fwrest"
	"netmon/collectors/snmp"
	"netmon/store"
	"netmon/store/record"
)

// Devices (spec 2.11, 4.8) and the topology (2.12, 4.10 uplinks). The
// credentials of a device (community, v3 passwords, API token) are one
// JSON document sealed by the vault with "devices/<id>" as associated
// data: a blob copied to another row does not open (case 30). They are
// never returned.

// DeviceStore keeps devices and their samples (*store.DB).
type DeviceStore interface {
	Devices(ctx context.Context, site string) ([]store.Device, error)
	Device(ctx context.Context, id int64) (store.Device, error)
	DeviceIfaces(ctx context.Context, id, from int64) ([]record.IfaceSample, error)
	DeviceResources(ctx context.Context, id, from int64) ([]record.ResourceSample, error)
	DeviceIfaceHistory(ctx context.Context, id, ifIndex, from int64) ([]store.IfaceRate, error)
	DeviceVPN(ctx context.Context, id, from int64) ([]record.VPNSample, error)
	DeviceSDWAN(ctx context.Context, id, from int64) ([]record.SDWANSample, error)
	DevicePolicies(ctx context.Context, id, from int64) ([]record.PolicyDelta, error)
	Agent(ctx context.Context, id int64) (store.Agent, error)
	InTx(ctx context.Context, fn func(*store.Tx) error) error
}

// DevicePoller probes a device once and re-reads the device list after a
// change (*snmp.Poller).
type DevicePoller interface {
	Probe(ctx context.Context, d record.Device) snmp.ProbeResult
	Refresh(ctx context.Context) error
}

// FirewallProber polls a firewall REST device once (fwrest.Probe).
type FirewallProber interface {
	ProbeFirewall(ctx context.Context, d record.Device) (fwrest.Result, error)
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

// DeviceKinds are the accepted device kinds.
var DeviceKinds = []string{"switch", "router", "firewall", "access-point", "server", "wireless-controller", "load-balancer", "other"}

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

// deviceSecrets is the sealed document.
type deviceSecrets struct {
	Community  string `json:"community,omitempty"`
	V3AuthPass string `json:"v3_auth_pass,omitempty"`
	V3PrivPass string `json:"v3_priv_pass,omitempty"`
	APIToken   string `json:"api_token,omitempty"`
}

// DeviceAD is the associated data a device's secrets are sealed with.
func DeviceAD(id int64) []byte { return []byte("devices/" + strconv.FormatInt(id, 10)) }

// OpenDeviceSecrets unseals a stored device into the record the pollers
// take (credentials in clear).
func OpenDeviceSecrets(v Sealer, d store.Device) (record.Device, error) {
	r := record.Device{ID: d.ID, Name: d.Name, Host: d.Host, Kind: d.Kind, Site: d.Site, SNMPVersion: d.SNMPVersion, PollSeconds: d.PollSeconds,
		Enabled: d.Enabled, V3User: d.V3User, V3AuthProto: d.V3AuthProto, V3PrivProto: d.V3PrivProto, Vendor: d.Vendor, APIURL: d.APIURL,
		APIVerifyTLS: d.APIVerifyTLS, VDOM: d.VDOM, Profile: d.Profile}
	if len(d.Secrets) == 0 {
		return r, nil
	}
	pt, err := v.Open(d.Secrets, DeviceAD(d.ID))
	if err != nil {
		return r, fmt.Errorf("open device %d credentials: %w", d.ID, err)
	}
	var s deviceSecrets
	if err := json.Unmarshal(pt, &s); err != nil {
		return r, fmt.Errorf("open device %d credentials: %w", d.ID, err)
	}
	r.Community, r.V3AuthPass, r.V3PrivPass, r.APIToken = s.Community, s.V3AuthPass, s.V3PrivPass, s.APIToken
	return r, nil
}

func deviceItem(d store.Device) DeviceItem {
	return DeviceItem{ID: d.ID, Name: d.Name, Host: d.Host, Kind: d.Kind, Site: d.Site, SNMPVersion: d.SNMPVersion, PollSeconds: d.PollSeconds,
		Enabled: d.Enabled, SysName: d.SysName, SysDescr: d.SysDescr, LastPoll: d.LastPoll, LastError: d.LastError,
		Vendor: d.Vendor, APIProfile: d.APIProfile, APIVersion: d.APIVersion, APICaps: d.APICaps}
}

// normalise validates a create body and returns the record it describes.
func (b DeviceCreate) normalise() (record.Device, error) {
	d := record.Device{Name: strings.TrimSpace(b.Name), Host: strings.TrimSpace(b.Host), Kind: b.Kind, Site: b.Site, SNMPVersion: b.SNMPVersion,
		Community: b.Community, PollSeconds: b.PollSeconds, Enabled: b.Enabled == nil || *b.Enabled, V3User: b.V3User,
		V3AuthProto: strings.ToUpper(strings.ReplaceAll(b.V3AuthProto, "-", "")), V3AuthPass: b.V3AuthPass,
		V3PrivProto: strings.ToUpper(strings.ReplaceAll(b.V3PrivProto, "-", "")), V3PrivPass: b.V3PrivPass,
		Vendor: b.Vendor, APIURL: b.APIURL, APIToken: b.APIToken, APIVerifyTLS: b.APIVerifyTLS == nil || *b.APIVerifyTLS, VDOM: b.VDOM, Profile: b.Profile}
	if d.Name == "" || len(d.Name) > 200 {
		return d, invalidField("name", "name must be 1 to 200 characters")
	}
	if d.Kind == "" {
		d.Kind = "switch"
	}
	if !slices.Contains(DeviceKinds, d.Kind) {
		return d, invalidField("kind", "kind must be one of %s", strings.Join(DeviceKinds, ", "))
	}
	if d.SNMPVersion == "" {
		d.SNMPVersion = "2c"
	}
	if d.SNMPVersion != "3" && d.Community == "" {
		d.Community = "public"
	}
	if d.PollSeconds == 0 {
		d.PollSeconds = 60
	}
	if d.PollSeconds < 10 || d.PollSeconds > 86400 {
		return d, invalidField("poll_seconds", "poll_seconds must be 10 to 86400")
	}
	if d.Profile == "" {
		d.Profile = "auto"
	}
	if d.Vendor != "" {
		if d.Vendor != "fwvendor" {
			return d, invalidField("vendor", "vendor must be fwvendor or empty")
		}
		if !strings.HasPrefix(d.APIURL, "https://") {
			return d, invalidField("api_url", "api_url must be https://<device>[:port]")
		}
		if d.PollSeconds < 60 {
			return d, invalidField("poll_seconds", "a REST device is polled at most once a minute (poll_seconds >= 60)")
		}
		return d, nil
	}
	if err := snmp.ValidateDevice(d); err != nil {
		field := "host"
		for _, f := range []string{"snmp_version", "v3_user", "v3_auth_proto", "v3_priv_proto"} {
			if strings.Contains(err.Error(), f) {
				field = f
			}
		}
		return d, invalidField(field, "%s", err.Error())
	}
	return d, nil
}

func (s *Server) listDevices(c *gin.Context, _ *struct{}) ([]DeviceItem, error) {
	if s.deps.Devices == nil {
		return []DeviceItem{}, nil
	}
	list, err := s.deps.Devices.Devices(c, callerOf(c).SiteFilter())
	if err != nil {
		return nil, err
	}
	out := make([]DeviceItem, len(list))
	for i, d := range list {
		out[i] = deviceItem(d)
	}
	return out, nil
}

type deviceCreateIn struct {
	Body DeviceCreate `body:"json"`
}

func (s *Server) createDevice(c *gin.Context, in *deviceCreateIn) (DeviceItem, error) {
	if s.deps.Devices == nil || s.deps.Vault == nil {
		return DeviceItem{}, errs.Unavailablef(0, "devices are not available on this hub")
	}
	who := callerOf(c)
	d, err := in.Body.normalise()
	if err != nil {
		return DeviceItem{}, err
	}
	d.Site = who.PinSite(d.Site)
	row := store.Device{Name: d.Name, Host: d.Host, Kind: d.Kind, Site: d.Site, SNMPVersion: d.SNMPVersion, V3User: d.V3User,
		V3AuthProto: d.V3AuthProto, V3PrivProto: d.V3PrivProto, Vendor: d.Vendor, APIURL: d.APIURL, APIVerifyTLS: d.APIVerifyTLS,
		VDOM: d.VDOM, Profile: d.Profile, PollSeconds: d.PollSeconds, Enabled: d.Enabled, CreatedAt: time.Now().Unix()}
	secrets, err := json.Marshal(deviceSecrets{Community: d.Community, V3AuthPass: d.V3AuthPass, V3PrivPass: d.V3PrivPass, APIToken: d.APIToken})
	if err != nil {
		return DeviceItem{}, err
	}
	// The audit record shows what was created, credentials masked.
	shown := deviceItem(row)
	err = s.deps.Devices.InTx(c, func(tx *store.Tx) error {
		id, err := tx.InsertDevice(c, row)
		if err != nil {
			return err
		}
		blob, err := s.deps.Vault.Seal(secrets, DeviceAD(id))
		if err != nil {
			return fmt.Errorf("seal device credentials: %w", err)
		}
		if err := tx.SetDeviceSecrets(c, id, blob); err != nil {
			return err
		}
		shown.ID = id
		rec := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
			audit.ActionDeviceCreate, "devices/"+strconv.FormatInt(id, 10), audit.ResultOK, "", nil, shown)
		_, err = tx.AppendAudit(c, rec)
		return err
	})
	if err != nil {
		return DeviceItem{}, err
	}
	s.devicesChanged(c)
	return shown, nil
}

// errNoDevice answers a device that does not exist or is another site's.
var errNoDevice = errs.NotFoundf("no such device")

// visibleDevice loads a device in the caller's scope.
func (s *Server) visibleDevice(c *gin.Context, id int64) (store.Device, error) {
	if s.deps.Devices == nil {
		return store.Device{}, errNoDevice
	}
	d, err := s.deps.Devices.Device(c, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && callerOf(c).Visible(d.Site) != nil) {
		return d, errNoDevice
	}
	return d, err
}

func (s *Server) deleteDevice(c *gin.Context, in *idIn) (OKResult, error) {
	who := callerOf(c)
	d, err := s.visibleDevice(c, in.ID)
	if err != nil {
		return OKResult{}, err
	}
	err = s.deps.Devices.InTx(c, func(tx *store.Tx) error {
		if err := tx.DeleteDevice(c, in.ID); err != nil {
			return err
		}
		rec := audit.Event(c, audit.Actor{Username: who.Username, Role: string(who.Role), ActorType: string(who.Actor)},
			audit.ActionDeviceDelete, "devices/"+strconv.FormatInt(in.ID, 10), audit.ResultOK, "", deviceItem(d), nil)
		_, err := tx.AppendAudit(c, rec)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return OKResult{}, errNoDevice
	}
	if err != nil {
		return OKResult{}, err
	}
	s.devicesChanged(c)
	return OKResult{OK: true}, nil
}

// devicesChanged has the poller re-read the list; a failure only delays
// the change to its next refresh.
func (s *Server) devicesChanged(c *gin.Context) {
	if s.deps.DevicePoller == nil {
		return
	}
	if err := s.deps.DevicePoller.Refresh(c); err != nil {
		s.log.WarnContext(c, "refresh device poller", "error", err)
	}
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
	d, err := in.Body.normalise()
	if err != nil {
		return ProbeReport{}, err
	}
	if d.Host == "" && d.Vendor == "" {
		return ProbeReport{}, invalidField("host", "a probe needs a host")
	}
	if d.Vendor != "" {
		if s.deps.FirewallProber == nil {
			return ProbeReport{}, errs.Unavailablef(0, "the firewall REST driver is not available on this hub")
		}
		start := time.Now()
		r, err := s.deps.FirewallProber.ProbeFirewall(c, d)
		rep := ProbeReport{OK: err == nil, ElapsedMS: time.Since(start).Milliseconds(), Version: r.Version, SysName: r.Hostname, VDOMMode: r.VDOMMode,
			Endpoints: make([]ProbeEndpoint, len(r.Endpoints))}
		if err != nil {
			rep.Error = err.Error()
		}
		for i, e := range r.Endpoints {
			rep.Endpoints[i] = ProbeEndpoint{Endpoint: e.Endpoint, Connectivity: e.Connectivity, HTTPCode: e.HTTPCode, Records: e.Records, Format: e.Format, Error: e.Error}
		}
		return rep, nil
	}
	if s.deps.DevicePoller == nil {
		return ProbeReport{}, errs.Unavailablef(0, "the device poller is not available on this hub")
	}
	r := s.deps.DevicePoller.Probe(c, d)
	format := "snmp-v" + d.SNMPVersion
	rep := ProbeReport{OK: r.OK, Error: r.Error, ElapsedMS: r.ElapsedMS, Version: r.SysDescr, SysName: r.SysName, Endpoints: []ProbeEndpoint{
		{Endpoint: "system", Connectivity: r.SysName != "" || r.SysDescr != "", Records: boolInt(r.SysName != "" || r.SysDescr != ""), Format: format},
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
	return rep, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

type deviceWindowIn struct {
	ID      int64 `path:"id" min:"1" doc:"device id"`
	Minutes int   `query:"minutes" min:"1" max:"10080" default:"60" doc:"window in minutes ending now"`
}

func (s *Server) deviceInterfaces(c *gin.Context, in *deviceWindowIn) ([]record.IfaceSample, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	return s.deps.Devices.DeviceIfaces(c, in.ID, time.Now().Add(-time.Duration(in.Minutes)*time.Minute).Unix())
}

type ifaceHistoryIn struct {
	ID      int64 `path:"id" min:"1" doc:"device id"`
	IfIndex int64 `path:"ifindex" min:"1" doc:"the interface's ifIndex"`
	Minutes int   `query:"minutes" min:"1" max:"10080" default:"60" doc:"window in minutes ending now"`
}

func (s *Server) deviceIfaceHistory(c *gin.Context, in *ifaceHistoryIn) ([]store.IfaceRate, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	return s.deps.Devices.DeviceIfaceHistory(c, in.ID, in.IfIndex, time.Now().Add(-time.Duration(in.Minutes)*time.Minute).Unix())
}

func (s *Server) deviceResources(c *gin.Context, in *deviceWindowIn) ([]record.ResourceSample, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	return s.deps.Devices.DeviceResources(c, in.ID, time.Now().Add(-time.Duration(in.Minutes)*time.Minute).Unix())
}

// The firewall REST device's series (spec 4.8; an SNMP device has none
// and answers []): after the scope check, another site's device is a 404.

func (s *Server) deviceVPN(c *gin.Context, in *deviceWindowIn) ([]record.VPNSample, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	return s.deps.Devices.DeviceVPN(c, in.ID, time.Now().Add(-time.Duration(in.Minutes)*time.Minute).Unix())
}

func (s *Server) deviceSDWAN(c *gin.Context, in *deviceWindowIn) ([]record.SDWANSample, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	return s.deps.Devices.DeviceSDWAN(c, in.ID, time.Now().Add(-time.Duration(in.Minutes)*time.Minute).Unix())
}

func (s *Server) devicePolicies(c *gin.Context, in *deviceWindowIn) ([]record.PolicyDelta, error) {
	if _, err := s.visibleDevice(c, in.ID); err != nil {
		return nil, err
	}
	return s.deps.Devices.DevicePolicies(c, in.ID, time.Now().Add(-time.Duration(in.Minutes)*time.Minute).Unix())
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
