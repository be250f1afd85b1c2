package fwrest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
)

// The parsers of each endpoint's results (Poll's steps). Each reads its
// part into locals and hands it to the Result only whole: an endpoint
// that fails leaves its part empty. Records counts what was read.

// parseStatus reads system/status: the first envelope's results object.
func parseStatus(envs []envelope, r *Result) (int, error) {
	e := envs[0] // decodeEnvelopes never returns an empty list
	var st struct {
		Hostname string `json:"hostname"`
		Model    string `json:"model"`
	}
	if err := object(e.Results, "results", &st); err != nil {
		return 0, err
	}
	if !firmwareRe.MatchString(e.Version) {
		return 0, shapeError{"no firmware version"}
	}
	if !serialRe.MatchString(e.Serial) {
		return 0, shapeError{"no serial number"}
	}
	r.Serial, r.Version = e.Serial, e.Version
	// The names are the device's; one not shaped as a host or model name
	// is left out rather than carried (the probe returns them).
	if nameRe.MatchString(st.Hostname) {
		r.Hostname = st.Hostname
	}
	if nameRe.MatchString(st.Model) {
		r.Model = st.Model
	}
	return 1, nil
}

// The identity of a monitor API answer: what the system status carries
// and another HTTPS service's JSON does not. A serial is letters and
// digits ("FGVM0000TEST0001"), a version v<major>.<minor>[.<patch>],
// a host or model name at most 63 letters, digits, '.', '_' or '-'.
var (
	firmwareRe = regexp.MustCompile(`^v?\d{1,3}\.\d{1,3}(\.\d{1,4})?$`)
	serialRe   = regexp.MustCompile(`^[A-Za-z0-9]{4,32}$`)
	nameRe     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
)

// parseResources reads system/resource/usage: an object of arrays of
// {current}. A percentage outside 0..100 or a session count outside
// 0..2^53 is not a reading: the endpoint fails rather than store it.
func parseResources(envs []envelope, r *Result, limit int) (int, error) {
	cur := map[string]float64{}
	err := eachMember(envs[0].Results, limit, "results", false, func(k string, v json.RawMessage) error {
		var list []struct {
			Current float64 `json:"current"`
		}
		n := 0
		err := eachElem(v, limit, "results."+resourceName(k), true, func(v json.RawMessage) error {
			n++
			if n > 1 {
				return nil // the first is the current reading
			}
			var x struct {
				Current float64 `json:"current"`
			}
			if err := object(v, "results."+resourceName(k)+"[0]", &x); err != nil {
				return err
			}
			list = append(list, x)
			return nil
		})
		if err != nil {
			return err
		}
		if len(list) > 0 {
			cur[k] = list[0].Current
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var cpu, mem, disk *float64
	var sessions *int64
	for _, k := range []string{"cpu", "mem", "disk"} {
		v, ok := cur[k]
		if !ok {
			continue
		}
		if !within(v, 0, 100) {
			return 0, shapeError{fmt.Sprintf("results.%s: a percentage out of 0..100", k)}
		}
		x := v
		switch k {
		case "cpu":
			cpu = &x
		case "mem":
			mem = &x
		case "disk":
			disk = &x
		}
	}
	if v, ok := cur["session"]; ok {
		if !within(v, 0, 1<<53) {
			return 0, shapeError{"results.session: a count out of range"}
		}
		n := int64(v)
		sessions = &n
	}
	r.CPUPct, r.MemPct, r.DiskPct, r.Sessions = cpu, mem, disk, sessions
	return len(cur), nil
}

// resourceName names a resources key in an error: the four the driver
// reads, "other" for anything else (a key is the device's text).
func resourceName(k string) string {
	switch k {
	case "cpu", "mem", "disk", "session":
		return k
	}
	return "other"
}

// maxSpeedMbps bounds an interface speed (10 Tbit/s): a larger one is
// unknown (0), not a divisor of the utilisation.
const maxSpeedMbps = 1e7

// parseIfaces reads system/interface: an object of interface objects.
func parseIfaces(envs []envelope, r *Result, limit int) (int, error) {
	var out []Iface
	err := eachMember(envs[0].Results, limit, "results", false, func(_ string, v json.RawMessage) error {
		var f struct {
			Name     string  `json:"name"`
			Alias    string  `json:"alias"`
			Link     bool    `json:"link"`
			Speed    float64 `json:"speed"`
			RxBytes  uint64  `json:"rx_bytes"`
			TxBytes  uint64  `json:"tx_bytes"`
			RxErrors uint64  `json:"rx_errors"`
			TxErrors uint64  `json:"tx_errors"`
		}
		if err := object(v, "results.<interface>", &f); err != nil {
			return err
		}
		if !within(f.Speed, 0, maxSpeedMbps) {
			f.Speed = 0
		}
		out = append(out, Iface{Name: clip(f.Name), Alias: clip(f.Alias), Link: f.Link, SpeedMbps: f.Speed, RxBytes: f.RxBytes, TxBytes: f.TxBytes, RxErrors: f.RxErrors, TxErrors: f.TxErrors})
		return nil
	})
	if err != nil {
		return 0, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	r.Ifaces = out
	return len(out), nil
}

// eachEnvList calls f with each element of every envelope's results
// array (vpn and policy endpoints; vdom=* answers one envelope per
// virtual domain), limit elements in all.
func eachEnvList(envs []envelope, limit int, f func(vdom string, v json.RawMessage) error) error {
	n := 0
	for _, e := range envs {
		err := eachElem(e.Results, limit, "results", true, func(v json.RawMessage) error {
			if n++; n > limit {
				return fmt.Errorf("results: over %d entries: %w", limit, errTooMany)
			}
			return f(e.VDOM, v)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// parseIPsec reads vpn/ipsec: arrays of phase 1 tunnels with their
// phase 2 selectors; a tunnel is up when any selector is.
func parseIPsec(envs []envelope, r *Result, limit int) (int, error) {
	var out []Tunnel
	err := eachEnvList(envs, limit, func(vdom string, v json.RawMessage) error {
		var t struct {
			Name         string `json:"name"`
			RGwy         string `json:"rgwy"`
			CreationTime int64  `json:"creation_time"`
			Incoming     uint64 `json:"incoming_bytes"`
			Outgoing     uint64 `json:"outgoing_bytes"`
			ProxyID      []struct {
				Status string `json:"status"`
			} `json:"proxyid"`
		}
		if err := object(v, "results[]", &t); err != nil {
			return err
		}
		st := "down"
		for _, p := range t.ProxyID {
			if p.Status == "up" {
				st = "up"
			}
		}
		out = append(out, Tunnel{VDOM: vdom, Name: clip(t.Name), RemoteGW: clip(t.RGwy), Status: st, UptimeSec: max(t.CreationTime, 0), InBytes: t.Incoming, OutBytes: t.Outgoing})
		return nil
	})
	if err != nil {
		return 0, err
	}
	r.Tunnels = out
	return len(out), nil
}

// parseSSL reads vpn/ssl: arrays of connected users.
func parseSSL(envs []envelope, r *Result, limit int) (int, error) {
	var out []SSLUser
	err := eachEnvList(envs, limit, func(vdom string, v json.RawMessage) error {
		var u struct {
			UserName   string `json:"user_name"`
			RemoteHost string `json:"remote_host"`
			LastLogin  int64  `json:"last_login_time"`
		}
		if err := object(v, "results[]", &u); err != nil {
			return err
		}
		out = append(out, SSLUser{VDOM: vdom, User: clip(u.UserName), RemoteHost: clip(u.RemoteHost), LoginTime: max(u.LastLogin, 0)})
		return nil
	})
	if err != nil {
		return 0, err
	}
	r.SSLUsers = out
	return len(out), nil
}

// parseSDWAN reads virtual-wan/health-check: per envelope an object of
// health checks, each an object of members.
func parseSDWAN(envs []envelope, r *Result, limit int) (int, error) {
	var out []HealthCheck
	for _, e := range envs {
		err := eachMember(e.Results, limit, "results", true, func(name string, v json.RawMessage) error {
			return eachMember(v, limit, "results.<check>", true, func(member string, v json.RawMessage) error {
				if len(out) == limit {
					return fmt.Errorf("results: over %d entries: %w", limit, errTooMany)
				}
				var h struct {
					Status     string  `json:"status"`
					Latency    float64 `json:"latency"`
					Jitter     float64 `json:"jitter"`
					PacketLoss float64 `json:"packet_loss"`
				}
				if err := object(v, "results.<check>.<member>", &h); err != nil {
					return err
				}
				out = append(out, HealthCheck{VDOM: e.VDOM, Name: clip(name), Member: clip(member), Status: clip(h.Status),
					LatencyMS: finite(h.Latency), JitterMS: finite(h.Jitter), LossPct: finite(h.PacketLoss)})
				return nil
			})
		})
		if err != nil {
			return 0, err
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.VDOM+"\x00"+a.Name+"\x00"+a.Member < b.VDOM+"\x00"+b.Name+"\x00"+b.Member
	})
	r.Health = out
	return len(out), nil
}

// parsePolicies reads firewall/policy: arrays of policy counters.
func parsePolicies(envs []envelope, r *Result, limit int) (int, error) {
	var out []PolicyHit
	err := eachEnvList(envs, limit, func(vdom string, v json.RawMessage) error {
		var p struct {
			PolicyID       int64  `json:"policyid"`
			HitCount       uint64 `json:"hit_count"`
			Bytes          uint64 `json:"bytes"`
			Packets        uint64 `json:"packets"`
			ActiveSessions uint64 `json:"active_sessions"`
		}
		if err := object(v, "results[]", &p); err != nil {
			return err
		}
		out = append(out, PolicyHit{VDOM: vdom, PolicyID: p.PolicyID, HitCount: p.HitCount, Bytes: p.Bytes, Packets: p.Packets, ActiveSessions: p.ActiveSessions})
		return nil
	})
	if err != nil {
		return 0, err
	}
	r.Policies = out
	return len(out), nil
}

// finite is v, or 0 for a value JSON cannot carry back out (the hub
// answers these numbers as JSON).
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// parseEndpoint runs the parser of the named endpoint (endpointNames).
func parseEndpoint(name string, envs []envelope, r *Result, limit int) (int, error) {
	switch name {
	case "status":
		return parseStatus(envs, r)
	case "resources":
		return parseResources(envs, r, limit)
	case "interfaces":
		return parseIfaces(envs, r, limit)
	case "vpn_ipsec":
		return parseIPsec(envs, r, limit)
	case "vpn_ssl":
		return parseSSL(envs, r, limit)
	case "sdwan":
		return parseSDWAN(envs, r, limit)
	case "policies":
		return parsePolicies(envs, r, limit)
	}
	return 0, fmt.Errorf("unknown endpoint %q", name)
}

// decodeAnswer decodes one endpoint's body whole, as a poll does after
// the HTTP exchange: its envelopes, then its results. The error is a
// *DecodeError (Path empty).
func decodeAnswer(name string, body []byte, r *Result, limit int) (int, error) {
	envs, err := decodeEnvelopes(body)
	if err != nil {
		return 0, err
	}
	n, err := parseEndpoint(name, envs, r, limit)
	if err != nil {
		return 0, &DecodeError{Reason: classify(err)}
	}
	return n, nil
}
