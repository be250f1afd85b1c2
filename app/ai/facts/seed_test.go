package facts_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"netmon/app/ai/facts"
	"netmon/store"
	"netmon/store/flowagg"
	"netmon/store/record"
)

// now is the tests' clock: 2027-01-15 08:00 UTC.
const now = 1_800_000_000

const day = 86400

// seeded are the ids of the seeded objects.
type seeded struct {
	web, db, pay                     int64 // agents: web-01, db-01 (north), pay-01 (south)
	coreSW, fw, ap, swSouth          int64 // devices
	portAlert, anomalyAlert, vpnDown int64 // north events
	southAlert                       int64
	incident, southIncident          int64
}

// The network's values the seed uses: none may reach a provider.
var (
	seededHosts = []string{"web-01", "db-01", "pay-01", "core-sw1", "fw-01", "ap-03", "sw-south", "alice"}
	seededAddrs = []string{"10.1.0.5", "203.0.113.50", "10.1.0.77", "10.1.0.1", "10.1.0.254", "198.51.100.20", "10.1.0.200",
		"10.1.0.33", "10.2.0.9", "10.2.0.1", "203.0.113.99", "00:11:22:33:44:55"}
)

// seed fills db with two sites: north (agents web-01 online and db-01
// offline, devices core-sw1, fw-01 and ap-03, the alerts and the
// incident of web-01) and south (agent pay-01, device sw-south, an alert
// and an incident), telemetry over the last hour and yesterday's same
// hour, deep collection, flows.
func seed(t testing.TB, db *store.DB) seeded {
	t.Helper()
	ctx := context.Background()
	var s seeded
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, a := range []struct {
			id         *int64
			name, site string
		}{{&s.web, "web-01", "north"}, {&s.db, "db-01", "north"}, {&s.pay, "pay-01", "south"}} {
			id, _, err := tx.CreateAgent(ctx, store.Agent{Name: a.name, Site: a.site, TokenHash: "h-" + a.name, EnrolledAt: now - 30*day, OS: "linux", Version: "1.4.0"})
			if err != nil {
				return err
			}
			*a.id = id
		}
		for _, d := range []struct {
			id                       *int64
			name, host, site, vendor string
		}{{&s.coreSW, "core-sw1", "10.1.0.1", "north", ""}, {&s.fw, "fw-01", "10.1.0.254", "north", "fwvendor"},
			{&s.ap, "ap-03", "10.1.0.33", "north", ""}, {&s.swSouth, "sw-south", "10.2.0.1", "south", ""}} {
			id, err := tx.InsertDevice(ctx, store.Device{Name: d.name, Host: d.host, Kind: "switch", Site: d.site, SNMPVersion: "2c", Vendor: d.vendor,
				PollSeconds: 60, Enabled: true, CreatedAt: now - 30*day})
			if err != nil {
				return err
			}
			*d.id = id
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	js := func(v any) []byte { b, _ := json.Marshal(v); return b }

	// Telemetry: three samples with a rate in the last hour and in
	// yesterday's same hour, then a last batch without one (the state).
	conns := []map[string]any{
		{"proto": "tcp", "local_addr": "10.1.0.5:51000", "remote_addr": "203.0.113.50:443", "status": "ESTABLISHED", "pid": 100, "process": "curl"},
		{"proto": "tcp", "local_addr": "10.1.0.5:22", "remote_addr": "10.1.0.77:60000", "status": "ESTABLISHED", "pid": 1, "process": "sshd"},
		{"proto": "tcp", "local_addr": "0.0.0.0:22", "remote_addr": "0.0.0.0:0", "status": "LISTEN", "pid": 1, "process": "sshd"},
	}
	var tel []record.Telemetry
	batches := func(agent int64, ip string, in, out float64, base float64) {
		seq := uint64(1)
		for _, at := range []int64{now - day - 3000, now - day - 1800, now - day - 600} {
			tel = append(tel, record.Telemetry{AgentID: agent, Seq: seq, TS: at, RemoteIP: ip, In: base * in, Out: base * out, HasRates: true, AttrMethod: "ebpf"})
			seq++
		}
		for _, at := range []int64{now - 3000, now - 1800, now - 600} {
			tel = append(tel, record.Telemetry{AgentID: agent, Seq: seq, TS: at, RemoteIP: ip, In: in, Out: out, PPS: 12, HasRates: true, AttrMethod: "ebpf"})
			seq++
		}
		tel = append(tel, record.Telemetry{AgentID: agent, Seq: seq, TS: now - 20, RemoteIP: ip, AttrMethod: "ebpf", Version: "1.4.0",
			Rates:       js([]map[string]any{{"name": "eth0", "rx_bps": in * 8, "tx_bps": out * 8, "pps": 12, "speed_mbps": 1000}}),
			Connections: js(conns), Conns: len(conns)})
	}
	batches(s.web, "10.1.0.5", 1000, 500, 0.5)
	batches(s.pay, "10.2.0.9", 100000, 100000, 1)
	tel = append(tel, record.Telemetry{AgentID: s.db, Seq: 1, TS: now - 3600, RemoteIP: "10.1.0.6", AttrMethod: "off"})
	_, err = db.WriteTelemetry(ctx, tel)
	must(err)

	// Deep collection: web-01 ran curl for days and xmrig since 2 hours;
	// pay-01 runs payd.
	deep := func(agent int64, seq uint64, at int64, proc, ip, domain, sni string, bytes uint64) record.Deep {
		return record.Deep{AgentID: agent, Seq: seq, TS: at,
			Processes: []record.ProcessBytes{{Process: proc, PID: 42, BytesIn: bytes, BytesOut: bytes / 2}},
			Remotes:   []record.RemoteBytes{{Process: proc, Proto: "tcp", IP: ip, Port: 443, BytesIn: bytes}},
			L7:        []record.L7Hit{{Host: sni, Kind: "tls", Process: proc, Bytes: bytes, Hits: 3}},
			DNS:       []record.DNSCount{{Domain: domain, Process: proc, Queries: 4, Responses: 4}}}
	}
	_, err = db.WriteDeep(ctx, []record.Deep{
		deep(s.web, 1, now-3*day, "curl", "203.0.113.50", "updates.example.com", "updates.example.com", 1000),
		deep(s.web, 2, now-600, "curl", "203.0.113.50", "updates.example.com", "updates.example.com", 2000),
		deep(s.web, 3, now-1200, "xmrig", "203.0.113.50", "pool.minexmr.example", "pool.minexmr.example", 40000),
		deep(s.pay, 1, now-600, "payd", "203.0.113.99", "pay.south.example", "pay.south.example", 90000),
	})
	must(err)

	// Flows: core-sw1 (north) and sw-south export.
	a := netip.MustParseAddr
	flow := func(at int64, exp, src, dst string, octets uint64) record.Flow {
		return record.Flow{TS: at, Exporter: a(exp), Src: a(src), Dst: a(dst), SrcPort: 51000, DstPort: 443, Proto: 6, Packets: 10, Octets: octets}
	}
	_, err = db.WriteFlowMinutes(ctx, flowagg.Sums(flowagg.DefaultConfig(), []record.Flow{
		flow(now-600, "10.1.0.1", "10.1.0.5", "203.0.113.50", 1_000_000),
		flow(now-day-600, "10.1.0.1", "10.1.0.5", "203.0.113.50", 500_000),
		flow(now-600, "10.2.0.1", "10.2.0.9", "203.0.113.99", 9_000_000),
	}))
	must(err)

	// The hub's capture: 10 minutes of the last hour, and yesterday's.
	for _, m := range []store.TrafficMinute{
		{TS: now - 600, InBytes: 6_000_000, OutBytes: 2_000_000, Seconds: 60},
		{TS: now - 540, InBytes: 3_000_000, OutBytes: 1_000_000, Seconds: 60},
		{TS: now - day - 600, InBytes: 2_000_000, OutBytes: 2_000_000, Seconds: 60},
	} {
		must(db.AddTrafficMinute(ctx, m))
	}

	// Devices: core-sw1 polled with a hot uplink, fw-01 with a tunnel
	// down, an SSL VPN user and SD-WAN, ap-03 unreachable, sw-south fine.
	f := func(v float64) *float64 { return &v }
	sessions := int64(1234)
	must(db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: s.coreSW, TS: now - 60, SysName: "core-sw1", SysDescr: "Cisco IOS 15.2 core-sw1",
		Ifaces: []record.IfaceSample{
			{IfIndex: 1, Name: "Gi0/1", Alias: "uplink to fw-01", Class: "ethernet", SpeedBps: 1e9, AdminUp: true, OperUp: true, RxBps: 113_750_000, TxBps: 12_500_000, RxUtilPct: f(91), TxUtilPct: f(10)},
			{IfIndex: 2, Name: "Gi0/2", Class: "ethernet", SpeedBps: 1e9, AdminUp: true, OperUp: false},
		},
		Resources: &record.ResourceSample{CPUPct: f(35), MemPct: f(60)}}))
	must(db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: s.fw, TS: now - 60, SysName: "fw-01",
		Ifaces:    []record.IfaceSample{{IfIndex: 5, Name: "wan1", Class: "ethernet", SpeedBps: 1e8, AdminUp: true, OperUp: true, RxBps: 1_250_000, TxBps: 625_000, RxUtilPct: f(10), TxUtilPct: f(5)}},
		Resources: &record.ResourceSample{CPUPct: f(20), MemPct: f(40), DiskPct: f(10), Sessions: &sessions},
		Firewall: &record.FirewallPoll{Profile: "7.4", Version: "v7.4.3",
			VPN: []record.VPNSample{
				{Kind: "ipsec", VDOM: "root", Name: "hq-tunnel", Remote: "198.51.100.20", Status: "down"},
				{Kind: "ssl", VDOM: "root", Name: "alice", Remote: "10.1.0.200", Status: "up", UptimeSec: 600, InBytes: 1000, OutBytes: 2000},
			},
			SDWAN: []record.SDWANSample{{VDOM: "root", Name: "ping-dc", Member: "wan1", Status: "up", LatencyMS: 40, JitterMS: 2, LossPct: 0.5}},
		}}))
	must(db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: s.ap, TS: now - 60, Err: "timeout contacting 10.1.0.33"}))
	must(db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: s.swSouth, TS: now - 60, SysName: "sw-south",
		Ifaces: []record.IfaceSample{{IfIndex: 1, Name: "eth0", SpeedBps: 1e9, AdminUp: true, OperUp: true, RxUtilPct: f(99)}}}))

	// Alerts and incidents.
	ev := func(e record.AlertEvent) int64 {
		t.Helper()
		got, err := db.InsertAlertEvent(ctx, e)
		must(err)
		return got.ID
	}
	s.portAlert = ev(record.AlertEvent{TS: now - 900, LastTS: now - 300, Kind: "port", Key: itoa(s.web) + "|203.0.113.50:4444", Severity: 9, State: "firing", Site: "north", AgentID: s.web, Count: 3,
		Process: "nc", Message: "web-01 connected to 203.0.113.50:4444 (gateway MAC 00:11:22:33:44:55)"})
	s.anomalyAlert = ev(record.AlertEvent{TS: now - 1200, LastTS: now - 600, Kind: "anomaly", Key: itoa(s.web) + "|in", Severity: 6, State: "ack", Site: "north", AgentID: s.web, Count: 2,
		Message: "agent " + itoa(s.web) + ": in 8.0 kbit/s, z 4.1 against 2.0 kbit/s"})
	s.vpnDown = ev(record.AlertEvent{TS: now - 120, Kind: "vpn_down", Key: itoa(s.fw) + "|root/hq-tunnel", Severity: 8, State: "firing", Site: "north",
		Message: "IPsec tunnel hq-tunnel (vdom root) of fw-01 (device " + itoa(s.fw) + ") is down"})
	ev(record.AlertEvent{TS: now - 5000, Kind: "proc", Key: itoa(s.web) + "|old", Severity: 4, State: "resolved", Site: "north", AgentID: s.web, ResolvedTS: now - 4000})
	s.southAlert = ev(record.AlertEvent{TS: now - 100, Kind: "port", Key: itoa(s.pay) + "|203.0.113.99:6667", Severity: 9, State: "firing", Site: "south", AgentID: s.pay,
		Message: "pay-01 connected to 203.0.113.99:6667"})
	inc := func(key string, agent int64, site, title string, risk int, members ...int64) int64 {
		i, _, err := db.UpsertIncident(ctx, record.Incident{Key: key, Rule: 2, AgentID: agent, Site: site, Severity: 9, Risk: risk, Title: title, OpenedTS: now - 900, UpdatedTS: now - 300}, members)
		must(err)
		return i.ID
	}
	s.incident = inc("r2|agent"+itoa(s.web), s.web, "north", "web-01: suspicious port and traffic anomaly", 72, s.portAlert, s.anomalyAlert)
	s.southIncident = inc("r2|agent"+itoa(s.pay), s.pay, "south", "pay-01: suspicious port", 80, s.southAlert)
	return s
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// builder is a Builder over db at the tests' clock.
func builder(db *store.DB) *facts.Builder {
	d := facts.StoreDeps(db)
	d.Now = func() time.Time { return time.Unix(now, 0) }
	return facts.New(d)
}
