package facts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"netmon/app/ai"
	"netmon/app/ai/facts"
	"netmon/app/ai/prompt"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// benchProcs and benchDomains are what a fleet's hosts commonly run and
// look up.
var (
	benchProcs = []string{"chrome", "firefox", "outlook", "teams", "slack", "zoom", "onedrive", "dropbox", "svchost", "systemd-resolved",
		"sshd", "curl", "python3", "java", "node", "nginx", "postgres", "backup-agent", "av-update", "code"}
	benchDomains = []string{"outlook.office365.com", "teams.microsoft.com", "www.google.com", "update.example.net", "cdn.example.org",
		"api.github.com", "slack.com", "zoom.us", "s3.amazonaws.com", "login.microsoftonline.com", "time.cloudflare.com", "intranet.corp.example"}
)

// seedFleet enrols n agents over 4 sites with what 30 s telemetry leaves
// in the last hour and in the same hour of the previous 7 days, deep
// collection every 5 minutes over the last hour (20 processes, 12 DNS
// names, 6 SNI each), 200 open alerts, 50 incidents and 40 switches with
// 24 interfaces each.
func seedFleet(b *testing.B, db *store.DB, n int) {
	b.Helper()
	ctx := context.Background()
	ids := make([]int64, n)
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i := range ids {
			id, _, err := tx.CreateAgent(ctx, store.Agent{Name: fmt.Sprintf("ws-%04d", i), Site: fmt.Sprintf("site-%d", i%4),
				TokenHash: fmt.Sprintf("h%d", i), EnrolledAt: now - 60*day})
			if err != nil {
				return err
			}
			ids[i] = id
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	js := func(v any) []byte { r, _ := json.Marshal(v); return r }
	var tel []record.Telemetry
	flush := func(force bool) {
		if len(tel) >= 50_000 || (force && len(tel) > 0) {
			if _, err := db.WriteTelemetry(ctx, tel); err != nil {
				b.Fatal(err)
			}
			tel = tel[:0]
		}
	}
	// Time-major, as the intake writes: each 30 s tick, every agent.
	var ticks []int64
	for d := int64(baselineDays); d >= 0; d-- {
		for at := now - d*day - 3600 + 15; at < now-d*day; at += 30 {
			ticks = append(ticks, at)
		}
	}
	for k, at := range ticks {
		for i, id := range ids {
			ip := fmt.Sprintf("10.%d.%d.%d", i%4, i/250, i%250+1)
			rate := float64(1000 + (i*37+int(at/30))%5000)
			t := record.Telemetry{AgentID: id, Seq: uint64(k + 1), TS: at, RemoteIP: ip, In: rate * 3, Out: rate, PPS: rate / 500, HasRates: true, AttrMethod: "ebpf"}
			if k == len(ticks)-1 {
				conns := make([]map[string]any, 0, 40)
				for c := range 40 {
					conns = append(conns, map[string]any{"proto": "tcp", "local_addr": ip + ":5" + fmt.Sprint(1000+c),
						"remote_addr": fmt.Sprintf("203.0.%d.%d:443", c%8, i%200+1), "status": "ESTABLISHED", "pid": 100 + c, "process": benchProcs[c%len(benchProcs)]})
				}
				t.Rates = js([]map[string]any{{"name": "eth0", "rx_bps": rate * 24, "tx_bps": rate * 8, "pps": rate / 500, "speed_mbps": 1000}})
				t.Connections, t.Conns = js(conns), len(conns)
			}
			tel = append(tel, t)
		}
		flush(false)
	}
	flush(true)

	var deep []record.Deep
	for i, id := range ids {
		for k := int64(0); k < 12; k++ {
			d := record.Deep{AgentID: id, Seq: uint64(k + 1), TS: now - 3600 + 150 + k*300}
			for p, name := range benchProcs {
				v := uint64(1000 * (p + 1) * (i%7 + 1))
				d.Processes = append(d.Processes, record.ProcessBytes{Process: name, PID: int32(1000 + p), BytesIn: v * 3, BytesOut: v})
			}
			for q, dom := range benchDomains {
				d.DNS = append(d.DNS, record.DNSCount{Domain: dom, Process: benchProcs[q%len(benchProcs)], Queries: uint64(q + 1), Responses: uint64(q + 1)})
				if q < 6 {
					d.L7 = append(d.L7, record.L7Hit{Host: dom, Kind: "tls", Process: benchProcs[q], Bytes: uint64(5000 * (q + 1)), Hits: 2})
				}
			}
			deep = append(deep, d)
		}
		if len(deep) >= 2000 || i == len(ids)-1 {
			if _, err := db.WriteDeep(ctx, deep); err != nil {
				b.Fatal(err)
			}
			deep = deep[:0]
		}
	}

	for i := range 200 {
		a := i * 5 % n
		if _, err := db.InsertAlertEvent(ctx, record.AlertEvent{TS: now - int64(i*60), Kind: []string{"port", "proc", "anomaly", "target", "ioc"}[i%5],
			Key: fmt.Sprintf("%d|x%d", ids[a], i), Severity: []int{9, 4, 6, 4, 8}[i%5], State: "firing", Site: fmt.Sprintf("site-%d", a%4), AgentID: ids[a],
			Count: int64(i%9 + 1), Message: fmt.Sprintf("ws-%04d talked to 198.51.100.%d:4444 (MAC 02:00:00:00:%02x:%02x)", a, i%250, i/256, i%256)}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 50 {
		a := i * 20 % n
		if _, _, err := db.UpsertIncident(ctx, record.Incident{Key: fmt.Sprintf("r1|agent%d", ids[a]), Rule: 1, AgentID: ids[a], Site: fmt.Sprintf("site-%d", a%4),
			Severity: 6, Risk: 30 + i, Title: fmt.Sprintf("ws-%04d: repeated alerts", a), OpenedTS: now - 3600, UpdatedTS: now - 60}, nil); err != nil {
			b.Fatal(err)
		}
	}
	var devs []int64
	err = db.InTx(ctx, func(tx *store.Tx) error {
		for i := range 40 {
			id, err := tx.InsertDevice(ctx, store.Device{Name: fmt.Sprintf("sw-%02d", i), Host: fmt.Sprintf("10.250.0.%d", i+1), Kind: "switch",
				Site: fmt.Sprintf("site-%d", i%4), SNMPVersion: "2c", PollSeconds: 60, Enabled: true, CreatedAt: now - 60*day})
			if err != nil {
				return err
			}
			devs = append(devs, id)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for i, id := range devs {
		p := record.DevicePoll{DeviceID: id, TS: now - 60, SysName: fmt.Sprintf("sw-%02d", i)}
		if i%10 == 9 {
			p = record.DevicePoll{DeviceID: id, TS: now - 60, Err: fmt.Sprintf("timeout contacting 10.250.0.%d", i+1)}
		}
		for k := range 24 {
			u := float64((i*24 + k) % 97)
			p.Ifaces = append(p.Ifaces, record.IfaceSample{IfIndex: k + 1, Name: fmt.Sprintf("Gi0/%d", k+1), Class: "ethernet", SpeedBps: 1e9,
				AdminUp: true, OperUp: k%11 != 0, RxBps: u * 1.25e6, TxBps: u * 1e6, RxUtilPct: &u})
		}
		if p.Err != "" {
			p.Ifaces = nil
		}
		if err := db.SaveDevicePoll(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// baselineDays mirrors the package's: the benchmark seeds what the
// baselines read.
const baselineDays = 7

// BenchmarkFleetFacts1000Agents: a new conversation on the fleet scope
// of 1 000 agents: Facts from the store, then prompt.Build within
// max_context_kb 24 with fresh pseudonyms. Issue 32's target: ≤ 200 ms
// and within 24 KiB.
func BenchmarkFleetFacts1000Agents(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			var db *store.DB
			if dialect == "sqlite" {
				db = storetest.OpenSQLite(b)
			} else {
				db = storetest.OpenPostgres(b)
			}
			start := time.Now()
			seedFleet(b, db, 1000)
			b.Logf("seeded in %s", time.Since(start).Round(time.Millisecond))
			d := facts.StoreDeps(db)
			d.Now = func() time.Time { return time.Unix(now, 0) }
			fb := facts.New(d)
			ctx := context.Background()
			var c prompt.Context
			var nfacts int
			b.ResetTimer()
			for b.Loop() {
				ps := prompt.New()
				fs, err := fb.Facts(ctx, ai.Scope{Kind: ai.ScopeFleet}, ps)
				if err != nil {
					b.Fatal(err)
				}
				if c, err = prompt.Build(prompt.SystemPrompt, fs, 24<<10, ps); err != nil {
					b.Fatal(err)
				}
				nfacts = len(fs)
			}
			if len(c.Bytes) > 24<<10 {
				b.Fatalf("%d bytes over 24 KiB", len(c.Bytes))
			}
			b.ReportMetric(float64(len(c.Bytes)), "bytes")
			b.ReportMetric(float64(c.Included), "facts")
			b.ReportMetric(float64(nfacts-c.Included), "omitted")
		})
	}
}
