package fwrest

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"time"

	"netmon/store/record"
)

// Monitor API paths read by a poll.
const (
	pathStatus    = "/api/v2/monitor/system/status"
	pathResources = "/api/v2/monitor/system/resource/usage"
	pathIfaces    = "/api/v2/monitor/system/interface"
	pathIPsec     = "/api/v2/monitor/vpn/ipsec"
	pathSSL       = "/api/v2/monitor/vpn/ssl"
	pathSDWAN     = "/api/v2/monitor/virtual-wan/health-check"
	pathPolicies  = "/api/v2/monitor/firewall/policy"
)

// Tunnel is an IPsec tunnel (phase 1 with its phase 2 selectors summed).
type Tunnel struct {
	VDOM      string `json:"vdom"`
	Name      string `json:"name"`
	RemoteGW  string `json:"remote_gw"`
	Status    string `json:"status" jsonschema:"enum=up,enum=down"`
	UptimeSec int64  `json:"uptime_sec"`
	InBytes   uint64 `json:"in_bytes"`
	OutBytes  uint64 `json:"out_bytes"`
}

// SSLUser is a connected SSL VPN user.
type SSLUser struct {
	VDOM       string `json:"vdom"`
	User       string `json:"user"`
	RemoteHost string `json:"remote_host"`
	LoginTime  int64  `json:"login_time"`
}

// HealthCheck is one SD-WAN member of one health check.
type HealthCheck struct {
	VDOM      string  `json:"vdom"`
	Name      string  `json:"name"`
	Member    string  `json:"member"`
	Status    string  `json:"status"`
	LatencyMS float64 `json:"latency_ms"`
	JitterMS  float64 `json:"jitter_ms"`
	LossPct   float64 `json:"loss_pct"`
}

// PolicyHit is a firewall policy's counters.
type PolicyHit struct {
	VDOM           string `json:"vdom"`
	PolicyID       int64  `json:"policy_id"`
	HitCount       uint64 `json:"hit_count"`
	Bytes          uint64 `json:"bytes"`
	Packets        uint64 `json:"packets"`
	ActiveSessions uint64 `json:"active_sessions"`
}

// Iface is an interface's counters as the device reports them.
type Iface struct {
	Name      string  `json:"name"`
	Alias     string  `json:"alias"`
	Link      bool    `json:"link"`
	SpeedMbps float64 `json:"speed_mbps"`
	RxBytes   uint64  `json:"rx_bytes"`
	TxBytes   uint64  `json:"tx_bytes"`
	RxErrors  uint64  `json:"rx_errors"`
	TxErrors  uint64  `json:"tx_errors"`
}

// Endpoint is what one request of a poll did (the probe's report).
type Endpoint struct {
	Endpoint     string `json:"endpoint"`
	Connectivity bool   `json:"connectivity"`
	HTTPCode     int    `json:"http_code"`
	Records      int    `json:"records"`
	Format       string `json:"format"`
	Error        string `json:"error"`
}

// Result is one poll of a device.
type Result struct {
	Hostname  string        `json:"hostname"`
	Model     string        `json:"model"`
	Serial    string        `json:"serial"`
	Version   string        `json:"version"`
	Profile   string        `json:"profile"`
	VDOMMode  string        `json:"vdom_mode" jsonschema:"description=single (one virtual domain) or multi (vdom all)"`
	CPUPct    *float64      `json:"cpu_pct"`
	MemPct    *float64      `json:"mem_pct"`
	DiskPct   *float64      `json:"disk_pct"`
	Sessions  *int64        `json:"sessions"`
	Ifaces    []Iface       `json:"interfaces"`
	Tunnels   []Tunnel      `json:"tunnels"`
	SSLUsers  []SSLUser     `json:"ssl_users"`
	Health    []HealthCheck `json:"health_checks"`
	Policies  []PolicyHit   `json:"policies"`
	Endpoints []Endpoint    `json:"endpoints"`
	Caps      []string      `json:"caps" jsonschema:"description=the endpoints that answered"`
}

var versionRe = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// ProfileOf picks the profile of a version ("v7.2.5" -> "7.2");
// "default" for a version this driver has no fixtures of.
func ProfileOf(version string) string {
	m := versionRe.FindStringSubmatch(version)
	if m == nil {
		return "default"
	}
	switch p := m[1] + "." + m[2]; p {
	case "7.0", "7.2", "7.4", "7.6":
		return p
	}
	return "default"
}

// Poll reads every endpoint once, in order, spaced. An endpoint that
// fails is reported in Endpoints and leaves its part empty; the error
// returned is the status endpoint's (nothing answers without it).
func (c *Client) Poll(ctx context.Context) (Result, error) {
	var r Result
	r.VDOMMode = "single"
	if c.dev.VDOM == "all" {
		r.VDOMMode = "multi"
	}
	limit := c.cfg.MaxRecords
	step := func(name, path string, q url.Values, parse func([]envelope) (int, error)) error {
		envs, code, err := c.get(ctx, name, path, q)
		ep := Endpoint{Endpoint: name, HTTPCode: code, Connectivity: code != 0, Format: "json"}
		if err == nil {
			var n int
			if n, err = parse(envs); err != nil {
				if errors.Is(err, errTooMany) {
					c.m.failed(reasonTooLarge)
				} else {
					c.m.failed(reasonDecode)
				}
				err = &DecodeError{Path: path, Reason: classify(err)}
			} else {
				ep.Records = n
				r.Caps = append(r.Caps, name)
			}
		}
		if err != nil {
			ep.Error = err.Error()
			if c.probe {
				ep.Error = errText(err)
			}
			if code == 0 {
				ep.Format = ""
			}
		}
		r.Endpoints = append(r.Endpoints, ep)
		return err
	}
	parse := func(name string) func([]envelope) (int, error) {
		return func(envs []envelope) (int, error) { return parseEndpoint(name, envs, &r, limit) }
	}
	err := step("status", pathStatus, nil, parse("status"))
	if err != nil {
		return r, err
	}
	r.Profile = c.dev.Profile
	if r.Profile == "" || r.Profile == "auto" {
		r.Profile = ProfileOf(r.Version)
	}
	_ = step("resources", pathResources, url.Values{"resource": {"cpu,mem,disk,session"}}, parse("resources"))
	_ = step("interfaces", pathIfaces, nil, parse("interfaces"))
	_ = step("vpn_ipsec", pathIPsec, nil, parse("vpn_ipsec"))
	_ = step("vpn_ssl", pathSSL, nil, parse("vpn_ssl"))
	_ = step("sdwan", pathSDWAN, nil, parse("sdwan"))
	_ = step("policies", pathPolicies, nil, parse("policies"))
	return r, nil
}

// Probe polls a device once with a fresh client. Its caller may name any
// HTTPS service (POST /api/v1/devices/probe): the result is classified
// (connectivity, HTTP code, records, format, the driver's own error
// words); the only text it carries from the answer is the system
// status of an answer recognised as the firewall's (checkIdentity).
func Probe(ctx context.Context, cfg Config, deps Deps, dev record.Device) (Result, error) {
	c, err := NewClient(cfg, deps, dev)
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	c.probe = true
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	r, err := c.Poll(ctx)
	if err != nil {
		err = errors.New(errText(err))
	}
	return r, err
}
