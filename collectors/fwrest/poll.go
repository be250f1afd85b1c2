package fwrest

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
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
	step := func(name, path string, q url.Values, parse func([]envelope) int) error {
		envs, code, err := c.get(ctx, name, path, q)
		ep := Endpoint{Endpoint: name, HTTPCode: code, Connectivity: code != 0, Format: "json"}
		if err != nil {
			ep.Error = err.Error()
			if code == 0 {
				ep.Format = ""
			}
		} else {
			ep.Records = parse(envs)
			r.Caps = append(r.Caps, name)
		}
		r.Endpoints = append(r.Endpoints, ep)
		return err
	}
	err := step("status", pathStatus, nil, func(envs []envelope) int {
		e := envs[0]
		var st struct {
			Hostname  string `json:"hostname"`
			ModelName string `json:"model_name"`
			Model     string `json:"model"`
		}
		_ = json.Unmarshal(e.Results, &st)
		r.Hostname, r.Model, r.Serial, r.Version = st.Hostname, st.Model, e.Serial, e.Version
		return 1
	})
	if err != nil {
		return r, err
	}
	r.Profile = c.dev.Profile
	if r.Profile == "" || r.Profile == "auto" {
		r.Profile = ProfileOf(r.Version)
	}
	_ = step("resources", pathResources, url.Values{"resource": {"cpu,mem,disk,session"}}, func(envs []envelope) int {
		var res map[string][]struct {
			Current float64 `json:"current"`
		}
		if json.Unmarshal(envs[0].Results, &res) != nil {
			return 0
		}
		cur := func(k string) *float64 {
			if v := res[k]; len(v) > 0 {
				x := v[0].Current
				return &x
			}
			return nil
		}
		r.CPUPct, r.MemPct, r.DiskPct = cur("cpu"), cur("mem"), cur("disk")
		if s := cur("session"); s != nil {
			n := int64(*s)
			r.Sessions = &n
		}
		return len(res)
	})
	_ = step("interfaces", pathIfaces, nil, func(envs []envelope) int {
		var m map[string]struct {
			Name     string  `json:"name"`
			Alias    string  `json:"alias"`
			Link     bool    `json:"link"`
			Speed    float64 `json:"speed"`
			RxBytes  uint64  `json:"rx_bytes"`
			TxBytes  uint64  `json:"tx_bytes"`
			RxErrors uint64  `json:"rx_errors"`
			TxErrors uint64  `json:"tx_errors"`
		}
		if json.Unmarshal(envs[0].Results, &m) != nil {
			return 0
		}
		for _, f := range m {
			r.Ifaces = append(r.Ifaces, Iface{Name: f.Name, Alias: f.Alias, Link: f.Link, SpeedMbps: f.Speed, RxBytes: f.RxBytes, TxBytes: f.TxBytes, RxErrors: f.RxErrors, TxErrors: f.TxErrors})
		}
		sort.Slice(r.Ifaces, func(i, j int) bool { return r.Ifaces[i].Name < r.Ifaces[j].Name })
		return len(r.Ifaces)
	})
	_ = step("vpn_ipsec", pathIPsec, nil, func(envs []envelope) int {
		for _, e := range envs {
			var list []struct {
				Name         string `json:"name"`
				RGwy         string `json:"rgwy"`
				CreationTime int64  `json:"creation_time"`
				Incoming     uint64 `json:"incoming_bytes"`
				Outgoing     uint64 `json:"outgoing_bytes"`
				ProxyID      []struct {
					Status string `json:"status"`
				} `json:"proxyid"`
			}
			if json.Unmarshal(e.Results, &list) != nil {
				continue
			}
			for _, t := range list {
				st := "down"
				for _, p := range t.ProxyID {
					if p.Status == "up" {
						st = "up"
					}
				}
				r.Tunnels = append(r.Tunnels, Tunnel{VDOM: e.VDOM, Name: t.Name, RemoteGW: t.RGwy, Status: st, UptimeSec: t.CreationTime, InBytes: t.Incoming, OutBytes: t.Outgoing})
			}
		}
		return len(r.Tunnels)
	})
	_ = step("vpn_ssl", pathSSL, nil, func(envs []envelope) int {
		for _, e := range envs {
			var list []struct {
				UserName   string `json:"user_name"`
				RemoteHost string `json:"remote_host"`
				LastLogin  int64  `json:"last_login_time"`
			}
			if json.Unmarshal(e.Results, &list) != nil {
				continue
			}
			for _, u := range list {
				r.SSLUsers = append(r.SSLUsers, SSLUser{VDOM: e.VDOM, User: u.UserName, RemoteHost: u.RemoteHost, LoginTime: u.LastLogin})
			}
		}
		return len(r.SSLUsers)
	})
	_ = step("sdwan", pathSDWAN, nil, func(envs []envelope) int {
		for _, e := range envs {
			var m map[string]map[string]struct {
				Status     string  `json:"status"`
				Latency    float64 `json:"latency"`
				Jitter     float64 `json:"jitter"`
				PacketLoss float64 `json:"packet_loss"`
			}
			if json.Unmarshal(e.Results, &m) != nil {
				continue
			}
			for name, members := range m {
				for member, h := range members {
					r.Health = append(r.Health, HealthCheck{VDOM: e.VDOM, Name: name, Member: member, Status: h.Status, LatencyMS: h.Latency, JitterMS: h.Jitter, LossPct: h.PacketLoss})
				}
			}
		}
		sort.Slice(r.Health, func(i, j int) bool {
			a, b := r.Health[i], r.Health[j]
			return a.VDOM+"\x00"+a.Name+"\x00"+a.Member < b.VDOM+"\x00"+b.Name+"\x00"+b.Member
		})
		return len(r.Health)
	})
	_ = step("policies", pathPolicies, nil, func(envs []envelope) int {
		for _, e := range envs {
			var list []struct {
				PolicyID       int64  `json:"policyid"`
				HitCount       uint64 `json:"hit_count"`
				Bytes          uint64 `json:"bytes"`
				Packets        uint64 `json:"packets"`
				ActiveSessions uint64 `json:"active_sessions"`
			}
			if json.Unmarshal(e.Results, &list) != nil {
				continue
			}
			for _, p := range list {
				r.Policies = append(r.Policies, PolicyHit{VDOM: e.VDOM, PolicyID: p.PolicyID, HitCount: p.HitCount, Bytes: p.Bytes, Packets: p.Packets, ActiveSessions: p.ActiveSessions})
			}
		}
		return len(r.Policies)
	})
	return r, nil
}

// Probe polls a device once with a fresh client.
func Probe(ctx context.Context, cfg Config, deps Deps, dev record.Device) (Result, error) {
	c, err := NewClient(cfg, deps, dev)
	if err != nil {
		return Result{}, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return c.Poll(ctx)
}
