package devices

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/record"
)

// The registry's operations the API calls (its handlers bind, check the
// caller's scope and call these).

// ErrNoDevice answers a device that does not exist (the API answers
// another site's device the same way).
var ErrNoDevice = errs.NotFoundf("no such device")

// Item is a device as the API shows it: exactly the fields of spec
// 2.11, credentials left out (also the audit record of a change).
type Item struct {
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
	Vendor      string `json:"vendor"`
	APIProfile  string `json:"api_profile"`
	APIVersion  string `json:"api_version"`
	APICaps     string `json:"api_caps"`
}

func itemOf(d store.Device) Item {
	return Item{ID: d.ID, Name: d.Name, Host: d.Host, Kind: d.Kind, Site: d.Site, SNMPVersion: d.SNMPVersion, PollSeconds: d.PollSeconds,
		Enabled: d.Enabled, SysName: d.SysName, SysDescr: d.SysDescr, LastPoll: d.LastPoll, LastError: d.LastError,
		Vendor: d.Vendor, APIProfile: d.APIProfile, APIVersion: d.APIVersion, APICaps: d.APICaps}
}

// List lists the devices of site ("" = every site).
func (c *Component) List(ctx context.Context, site string) ([]Item, error) {
	list, err := c.deps.Store.Devices(ctx, site)
	if err != nil {
		return nil, err
	}
	out := make([]Item, len(list))
	for i, d := range list {
		out[i] = itemOf(d)
	}
	return out, nil
}

// Get returns one device; ErrNoDevice when there is none.
func (c *Component) Get(ctx context.Context, id int64) (Item, error) {
	d, err := c.deps.Store.Device(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Item{}, ErrNoDevice
	}
	if err != nil {
		return Item{}, err
	}
	return itemOf(d), nil
}

// Create validates in, stores the device with its credentials sealed
// and its audit record (device.create, credentials left out) in one
// transaction, and has the poller pick it up at once.
func (c *Component) Create(ctx context.Context, actor audit.Actor, in Input) (Item, error) {
	if c.deps.Vault == nil {
		return Item{}, errs.Unavailablef(0, "devices are not available on this hub")
	}
	d, err := Validate(in)
	if err != nil {
		return Item{}, err
	}
	row := store.Device{Name: d.Name, Host: d.Host, Kind: d.Kind, Site: d.Site, SNMPVersion: d.SNMPVersion, V3User: d.V3User,
		V3AuthProto: d.V3AuthProto, V3PrivProto: d.V3PrivProto, Vendor: d.Vendor, APIURL: d.APIURL, APIVerifyTLS: d.APIVerifyTLS,
		VDOM: d.VDOM, Profile: d.Profile, PollSeconds: d.PollSeconds, Enabled: d.Enabled, CreatedAt: time.Now().Unix()}
	sealed, err := json.Marshal(secrets{Community: d.Community, V3AuthPass: d.V3AuthPass, V3PrivPass: d.V3PrivPass, APIToken: d.APIToken})
	if err != nil {
		return Item{}, err
	}
	shown := itemOf(row)
	err = c.deps.Store.InTx(ctx, func(tx *store.Tx) error {
		id, err := tx.InsertDevice(ctx, row)
		if err != nil {
			return err
		}
		blob, err := c.deps.Vault.Seal(sealed, AD(id))
		if err != nil {
			return fmt.Errorf("seal device credentials: %w", err)
		}
		if err := tx.SetDeviceSecrets(ctx, id, blob); err != nil {
			return err
		}
		shown.ID = id
		rec := audit.Event(ctx, actor, audit.ActionDeviceCreate, "devices/"+strconv.FormatInt(id, 10), audit.ResultOK, "", nil, shown)
		_, err = tx.AppendAudit(ctx, rec)
		return err
	})
	if err != nil {
		return Item{}, err
	}
	c.changed(ctx)
	return shown, nil
}

// Delete deletes a device and its samples with its audit record
// (device.delete); ErrNoDevice when there is none.
func (c *Component) Delete(ctx context.Context, actor audit.Actor, id int64) error {
	before, err := c.Get(ctx, id)
	if err != nil {
		return err
	}
	err = c.deps.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.DeleteDevice(ctx, id); err != nil {
			return err
		}
		rec := audit.Event(ctx, actor, audit.ActionDeviceDelete, "devices/"+strconv.FormatInt(id, 10), audit.ResultOK, "", before, nil)
		_, err := tx.AppendAudit(ctx, rec)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return ErrNoDevice
	}
	if err != nil {
		return err
	}
	c.changed(ctx)
	return nil
}

// changed has the poller re-read the list; a failure only delays the
// change to its next refresh.
func (c *Component) changed(ctx context.Context) {
	if err := c.Refresh(ctx); err != nil {
		c.log.WarnContext(ctx, "refresh devices", "error", err)
	}
}

// Probe validates in and polls it once through its driver; nothing is
// recorded.
func (c *Component) Probe(ctx context.Context, in Input) (ProbeReport, error) {
	d, err := Validate(in)
	if err != nil {
		return ProbeReport{}, err
	}
	if d.Host == "" && d.Vendor == "" {
		return ProbeReport{}, invalid("host", "a probe needs a host")
	}
	drv := c.driverOf(d)
	if drv == nil {
		return ProbeReport{}, invalid("vendor", "%s", errNoDriver.Error())
	}
	return drv.Probe(ctx, d), nil
}

// Interface is an interface sample with its status computed by the
// server (spec 3's colours): down when not oper-up, else by the higher
// of in and out utilisation: critical from 90 %, warning from 70 %,
// normal below or when the speed is unknown.
type Interface struct {
	record.IfaceSample
	Status string `json:"status"`
}

// IfaceStatus is an interface sample's status (see Interface).
func IfaceStatus(f record.IfaceSample) string {
	if !f.OperUp {
		return "down"
	}
	u := 0.0
	if f.RxUtilPct != nil {
		u = *f.RxUtilPct
	}
	if f.TxUtilPct != nil {
		u = max(u, *f.TxUtilPct)
	}
	switch {
	case u >= 90:
		return "critical"
	case u >= 70:
		return "warning"
	}
	return "normal"
}

// Interfaces lists a device's interface samples since from, each with
// its status.
func (c *Component) Interfaces(ctx context.Context, id, from int64) ([]Interface, error) {
	list, err := c.deps.Store.DeviceIfaces(ctx, id, from)
	if err != nil {
		return nil, err
	}
	out := make([]Interface, len(list))
	for i, f := range list {
		out[i] = Interface{IfaceSample: f, Status: IfaceStatus(f)}
	}
	return out, nil
}

// The series of one device since from (Unix seconds); a REST device's
// VPN, SD-WAN and policy series are empty for an SNMP device.

// IfaceHistory is one interface's rates.
func (c *Component) IfaceHistory(ctx context.Context, id, ifIndex, from int64) ([]store.IfaceRate, error) {
	return c.deps.Store.DeviceIfaceHistory(ctx, id, ifIndex, from)
}

// Resources is the CPU, memory, disk and session samples.
func (c *Component) Resources(ctx context.Context, id, from int64) ([]record.ResourceSample, error) {
	return c.deps.Store.DeviceResources(ctx, id, from)
}

// VPN is the IPsec tunnels and SSL VPN users per poll.
func (c *Component) VPN(ctx context.Context, id, from int64) ([]record.VPNSample, error) {
	return c.deps.Store.DeviceVPN(ctx, id, from)
}

// SDWAN is the SD-WAN health-check members per poll.
func (c *Component) SDWAN(ctx context.Context, id, from int64) ([]record.SDWANSample, error) {
	return c.deps.Store.DeviceSDWAN(ctx, id, from)
}

// Policies is the policies' counters over the window.
func (c *Component) Policies(ctx context.Context, id, from int64) ([]record.PolicyDelta, error) {
	return c.deps.Store.DevicePolicies(ctx, id, from)
}
