package fwrest

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/store/record"
)

// Polling of the fwvendor devices (spec 2.11, 8): the device component
// (collectors/devices) schedules each device every max(poll_seconds,
// MinInterval) and backs a failing one off up to Config.MaxBackoff; a
// device's Session keeps one client between polls (so the 150 ms spacing
// holds across polls too) and the counters of its previous poll.

// MinInterval is the shortest poll interval of a REST device (spec 8):
// a poll_seconds under it is raised to it.
const MinInterval = 60 * time.Second

// Interval is a device's poll interval: poll_seconds, never under
// MinInterval.
func Interval(d record.Device) time.Duration {
	return max(time.Duration(d.PollSeconds)*time.Second, MinInterval)
}

// Driver polls firewall REST devices.
type Driver struct {
	cfg  Config
	deps Deps
	m    *metrics
	now  func() time.Time // a poll's timestamp (tests set a clock)
}

// NewDriver returns the driver, its metrics registered on reg (nil: not
// registered); it does no work.
func NewDriver(cfg Config, deps Deps, reg prometheus.Registerer) *Driver {
	return &Driver{cfg: cfg, deps: deps, m: newMetrics(reg), now: time.Now}
}

// Config is the driver's configuration (its MaxBackoff: the device
// component's backoff cap for REST devices).
func (d *Driver) Config() Config { return d.cfg }

// Session is one device's memory between polls: its client and the
// interface counters of its previous successful poll. It is used by one
// poll at a time.
type Session struct {
	d      *Driver
	client *Client
	dev    record.Device // the settings client was made with
	prev   map[string]ifPrev
	prevAt time.Time
}

type ifPrev struct{ rx, tx uint64 }

// Open returns a new session; it does no I/O.
func (d *Driver) Open() *Session { return &Session{d: d} }

// Poll polls dev once and returns what to record: the system group,
// interface samples with rates, resources and the REST series. A device
// whose address, token or options changed gets a new client and forgets
// its counters. A poll is bounded by its interval less 5 s (at least
// 30 s).
func (s *Session) Poll(ctx context.Context, dev record.Device) (record.DevicePoll, error) {
	if s.client != nil && (s.dev.APIURL != dev.APIURL || s.dev.APIToken != dev.APIToken || s.dev.APIVerifyTLS != dev.APIVerifyTLS ||
		s.dev.VDOM != dev.VDOM || s.dev.Profile != dev.Profile) {
		s.Close()
	}
	start := s.d.now()
	out := record.DevicePoll{DeviceID: dev.ID, TS: start.Unix()}
	if s.client == nil {
		c, err := NewClient(s.d.cfg, s.d.deps, dev)
		if err != nil {
			out.Err = err.Error()
			return out, err
		}
		c.m = s.d.m
		s.client, s.dev = c, dev
	}
	pctx, cancel := context.WithTimeout(ctx, max(Interval(dev)-5*time.Second, 30*time.Second))
	defer cancel()
	r, err := s.client.Poll(pctx)
	if err != nil {
		out.Err = err.Error()
		return out, err
	}
	cur := convert(&out, r, dev, s.prev, s.prevAt, start)
	s.prev, s.prevAt = cur, start
	return out, nil
}

// Close releases the session's client (nil-safe).
func (s *Session) Close() {
	if s != nil && s.client != nil {
		s.client.Close()
		s.client, s.prev = nil, nil
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
