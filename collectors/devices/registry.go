package devices

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"netmon/app/errs"
	"netmon/collectors/snmp"
	"netmon/store"
	"netmon/store/record"
)

// The registry: a device's validation, its credentials (community, v3
// passwords, API token) sealed by the vault as one JSON document with
// "devices/<id>" as associated data (a blob copied to another row does
// not open: case 30), and the poll targets with them opened.

// Kinds are the accepted device kinds.
var Kinds = []string{"switch", "router", "firewall", "access-point", "server", "wireless-controller", "load-balancer", "other"}

// Input is a device as a caller describes it (the body of a create and
// of a probe); empty fields take their defaults.
type Input struct {
	Name         string
	Host         string
	Kind         string
	Site         string
	SNMPVersion  string
	Community    string
	PollSeconds  int
	Enabled      *bool
	V3User       string
	V3AuthProto  string
	V3AuthPass   string
	V3PrivProto  string
	V3PrivPass   string
	Vendor       string
	APIURL       string
	APIToken     string
	APIVerifyTLS *bool
	VDOM         string
	Profile      string
}

// invalid is a validation error naming its field (errs.Invalid with
// Field set: the API answers 400 with it); the message is the field's
// own words, as the API has always answered.
func invalid(field, format string, args ...any) error {
	e := errs.Invalidf(format, args...)
	e.Field = field
	return e
}

// Validate checks in and returns the device it describes, defaults
// applied. Its error is an *errs.Error of kind Invalid whose Field names
// the bad field.
func Validate(in Input) (record.Device, error) {
	d := record.Device{Name: strings.TrimSpace(in.Name), Host: strings.TrimSpace(in.Host), Kind: in.Kind, Site: in.Site, SNMPVersion: in.SNMPVersion,
		Community: in.Community, PollSeconds: in.PollSeconds, Enabled: in.Enabled == nil || *in.Enabled, V3User: in.V3User,
		V3AuthProto: strings.ToUpper(strings.ReplaceAll(in.V3AuthProto, "-", "")), V3AuthPass: in.V3AuthPass,
		V3PrivProto: strings.ToUpper(strings.ReplaceAll(in.V3PrivProto, "-", "")), V3PrivPass: in.V3PrivPass,
		Vendor: in.Vendor, APIURL: in.APIURL, APIToken: in.APIToken, APIVerifyTLS: in.APIVerifyTLS == nil || *in.APIVerifyTLS, VDOM: in.VDOM, Profile: in.Profile}
	if d.Name == "" || len(d.Name) > 200 {
		return d, invalid("name", "name must be 1 to 200 characters")
	}
	if d.Kind == "" {
		d.Kind = "switch"
	}
	if !slices.Contains(Kinds, d.Kind) {
		return d, invalid("kind", "kind must be one of %s", strings.Join(Kinds, ", "))
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
		return d, invalid("poll_seconds", "poll_seconds must be 10 to 86400")
	}
	if d.Profile == "" {
		d.Profile = "auto"
	}
	if d.Vendor != "" {
		if d.Vendor != "fwvendor" {
			return d, invalid("vendor", "vendor must be fwvendor or empty")
		}
		if !strings.HasPrefix(d.APIURL, "https://") {
			return d, invalid("api_url", "api_url must be https://<device>[:port]")
		}
		if d.PollSeconds < 60 {
			return d, invalid("poll_seconds", "a REST device is polled at most once a minute (poll_seconds >= 60)")
		}
		return d, nil
	}
	if err := snmp.ValidateDevice(d); err != nil {
		var fe *snmp.FieldError
		if errors.As(err, &fe) {
			return d, invalid(fe.Field, "%s", fe.Error())
		}
		return d, invalid("host", "%s", err.Error())
	}
	return d, nil
}

// secrets is the sealed document.
type secrets struct {
	Community  string `json:"community,omitempty"`
	V3AuthPass string `json:"v3_auth_pass,omitempty"`
	V3PrivPass string `json:"v3_priv_pass,omitempty"`
	APIToken   string `json:"api_token,omitempty"`
}

// AD is the associated data a device's credentials are sealed with.
func AD(id int64) []byte { return []byte("devices/" + strconv.FormatInt(id, 10)) }

// OpenSecrets unseals a stored device into the record the drivers take
// (credentials in clear).
func OpenSecrets(v Sealer, d store.Device) (record.Device, error) {
	r := record.Device{ID: d.ID, Name: d.Name, Host: d.Host, Kind: d.Kind, Site: d.Site, SNMPVersion: d.SNMPVersion, PollSeconds: d.PollSeconds,
		Enabled: d.Enabled, V3User: d.V3User, V3AuthProto: d.V3AuthProto, V3PrivProto: d.V3PrivProto, Vendor: d.Vendor, APIURL: d.APIURL,
		APIVerifyTLS: d.APIVerifyTLS, VDOM: d.VDOM, Profile: d.Profile}
	if len(d.Secrets) == 0 {
		return r, nil
	}
	if v == nil {
		return r, fmt.Errorf("open device %d credentials: no vault", d.ID)
	}
	pt, err := v.Open(d.Secrets, AD(d.ID))
	if err != nil {
		return r, fmt.Errorf("open device %d credentials: %w", d.ID, err)
	}
	var s secrets
	if err := json.Unmarshal(pt, &s); err != nil {
		return r, fmt.Errorf("open device %d credentials: %w", d.ID, err)
	}
	r.Community, r.V3AuthPass, r.V3PrivPass, r.APIToken = s.Community, s.V3AuthPass, s.V3PrivPass, s.APIToken
	return r, nil
}

// PollTargets lists the stored devices with their credentials opened. A
// device whose credentials do not open (another vault key, a moved blob)
// is left out and logged, not polled with empty ones.
func (c *Component) PollTargets(ctx context.Context) ([]record.Device, error) {
	list, err := c.deps.Store.Devices(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]record.Device, 0, len(list))
	for _, d := range list {
		r, err := OpenSecrets(c.deps.Vault, d)
		if err != nil {
			c.log.Warn("device credentials do not open; not polled", "device", d.ID, "error", err)
			continue
		}
		out = append(out, r)
	}
	return out, nil
}
