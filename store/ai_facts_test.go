package store_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/flowagg"
	"netmon/store/record"
	"netmon/store/storetest"
)

// aiNow is the fixed "now" of the AI reads' tests: a minute start.
const aiNow = 1_800_000_000

// seedAIAgents enrols agents (name → site) and returns their ids.
func seedAIAgents(t *testing.T, db *store.DB, agents [][2]string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	ids := map[string]int64{}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, a := range agents {
			id, _, err := tx.CreateAgent(ctx, store.Agent{Name: a[0], Site: a[1], TokenHash: "h-" + a[0], EnrolledAt: 1})
			if err != nil {
				return err
			}
			ids[a[0]] = id
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestAgentTrafficWindows: the samples with a rate are summed per agent
// and window; a site keeps its agents only; Bytes spreads the mean
// interval over the samples, or the interval given for a single one.
func TestAgentTrafficWindows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ids := seedAIAgents(t, db, [][2]string{{"a1", "n"}, {"a2", "n"}, {"a3", "s"}})
		ins := func(agent string, seq, ts int64, rx, tx float64, rate bool) {
			if _, err := db.Writer().ExecContext(ctx, `INSERT INTO agent_samples (agent_id, seq, ts, rx_bps, tx_bps, local_bps, pps, has_rate, conns) VALUES ($1, $2, $3, $4, $5, 0, 0, $6, 0)`,
				ids[agent], seq, ts, rx, tx, rate); err != nil {
				t.Fatal(err)
			}
		}
		ins("a1", 1, aiNow-3000, 100, 200, true)
		ins("a1", 2, aiNow-2400, 300, 400, true)
		ins("a1", 3, aiNow-1800, 999, 999, false) // no rate: not counted
		ins("a1", 4, aiNow-86400-60, 50, 50, true)
		ins("a2", 1, aiNow-86400-30, 10, 20, true)
		ins("a3", 1, aiNow-60, 7, 7, true)
		ins("a1", 5, aiNow, 1, 1, true) // the window's end is open
		ws := []store.TimeWindow{{From: aiNow - 3600, To: aiNow}, {From: aiNow - 86400 - 3600, To: aiNow - 86400}}
		for _, tc := range []struct {
			name   string
			site   string
			agents []int64
			want   []store.AgentWindowTraffic
		}{
			{"site n", "n", nil, []store.AgentWindowTraffic{
				{AgentID: ids["a1"], Window: 0, InSum: 400, OutSum: 600, N: 2, MinTS: aiNow - 3000, MaxTS: aiNow - 2400},
				{AgentID: ids["a1"], Window: 1, InSum: 50, OutSum: 50, N: 1, MinTS: aiNow - 86460, MaxTS: aiNow - 86460},
				{AgentID: ids["a2"], Window: 1, InSum: 10, OutSum: 20, N: 1, MinTS: aiNow - 86430, MaxTS: aiNow - 86430},
			}},
			{"one agent", "", []int64{ids["a3"]}, []store.AgentWindowTraffic{
				{AgentID: ids["a3"], Window: 0, InSum: 7, OutSum: 7, N: 1, MinTS: aiNow - 60, MaxTS: aiNow - 60},
			}},
			{"agent of another site", "n", []int64{ids["a3"]}, []store.AgentWindowTraffic{}},
			{"two agents", "", []int64{ids["a2"], ids["a3"]}, []store.AgentWindowTraffic{
				{AgentID: ids["a2"], Window: 1, InSum: 10, OutSum: 20, N: 1, MinTS: aiNow - 86430, MaxTS: aiNow - 86430},
				{AgentID: ids["a3"], Window: 0, InSum: 7, OutSum: 7, N: 1, MinTS: aiNow - 60, MaxTS: aiNow - 60},
			}},
			{"no agents", "", []int64{}, []store.AgentWindowTraffic{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := db.AgentTrafficWindows(ctx, tc.site, tc.agents, ws)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			})
		}
		// 2 samples 600 s apart: each rate holds 600 s.
		in, out := store.AgentWindowTraffic{InSum: 400, OutSum: 600, N: 2, MinTS: 0, MaxTS: 600}.Bytes(30)
		if in != 240000 || out != 360000 {
			t.Errorf("Bytes = %v, %v; want 240000, 360000", in, out)
		}
		if in, _ := (store.AgentWindowTraffic{InSum: 7, N: 1}).Bytes(30); in != 210 {
			t.Errorf("Bytes of one sample = %v; want 210", in)
		}
	})
}

// TestFlowHostBytes: an address's octets as source and destination add
// up per window; the busiest of the first window are listed and their
// other windows follow; a site keeps its devices' exporters only.
func TestFlowHostBytes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.InsertDevice(ctx, store.Device{Name: "edge", Host: "192.0.2.1", Site: "n", Enabled: true, CreatedAt: 1})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		a := netip.MustParseAddr
		flow := func(ts int64, exp, src, dst string, octets uint64) record.Flow {
			return record.Flow{TS: ts, Exporter: a(exp), Src: a(src), Dst: a(dst), SrcPort: 40000, DstPort: 443, Proto: 6, Packets: 1, Octets: octets}
		}
		fs := []record.Flow{
			flow(aiNow-600, "192.0.2.1", "10.0.0.1", "203.0.113.9", 1000),
			flow(aiNow-600, "192.0.2.1", "203.0.113.9", "10.0.0.1", 500),
			flow(aiNow-300, "192.0.2.1", "10.0.0.2", "203.0.113.9", 700),
			flow(aiNow-86400-600, "192.0.2.1", "10.0.0.1", "198.51.100.7", 300),
			flow(aiNow-600, "192.0.2.99", "10.9.9.9", "203.0.113.9", 5000), // exporter of no site
		}
		if _, err := db.WriteFlowMinutes(ctx, flowagg.Sums(flowagg.DefaultConfig(), fs)); err != nil {
			t.Fatal(err)
		}
		ws := []store.TimeWindow{{From: aiNow - 3600, To: aiNow}, {From: aiNow - 86400 - 3600, To: aiNow - 86400}}
		for _, tc := range []struct {
			name  string
			site  string
			hosts []string
			limit int
			want  []store.HostWindowBytes
		}{
			{"site n top 2", "n", nil, 2, []store.HostWindowBytes{
				{Host: "203.0.113.9", Window: 0, Octets: 2200}, {Host: "10.0.0.1", Window: 0, Octets: 1500},
				{Host: "10.0.0.1", Window: 1, Octets: 300},
			}},
			{"every site", "", nil, 1, []store.HostWindowBytes{{Host: "203.0.113.9", Window: 0, Octets: 7200}}},
			{"named hosts", "n", []string{"198.51.100.7"}, 0, []store.HostWindowBytes{{Host: "198.51.100.7", Window: 1, Octets: 300}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := db.FlowHostBytes(ctx, tc.site, ws, tc.hosts, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			})
		}
	})
}

// TestAgentNewNames: only what the agent first reported at or after
// since is new; (unattributed) is never a process; busiest first.
func TestAgentNewNames(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ids := seedAIAgents(t, db, [][2]string{{"a1", "n"}, {"a2", "n"}})
		a1 := ids["a1"]
		batch := func(agent int64, seq, ts int64, proc, ip, domain string, bytes uint64) record.Deep {
			return record.Deep{AgentID: agent, Seq: uint64(seq), TS: ts,
				Processes: []record.ProcessBytes{{Process: proc, PID: 1, BytesIn: bytes, BytesOut: bytes}, {Process: "(unattributed)", BytesIn: 9}},
				Remotes:   []record.RemoteBytes{{Process: proc, Proto: "tcp", IP: ip, Port: 443, BytesIn: bytes}},
				DNS:       []record.DNSCount{{Domain: domain, Process: proc, Queries: bytes / 100}}}
		}
		ds := []record.Deep{
			batch(a1, 1, aiNow-3*86400, "sshd", "192.0.2.10", "old.example", 100),
			batch(a1, 2, aiNow-3600, "sshd", "192.0.2.10", "old.example", 100),
			batch(a1, 3, aiNow-7200, "miner", "203.0.113.66", "pool.example", 5000),
			batch(a1, 4, aiNow-600, "curl", "198.51.100.3", "api.example", 200),
			batch(ids["a2"], 1, aiNow-600, "other", "198.51.100.4", "a2.example", 900),
		}
		if _, err := db.WriteDeep(ctx, ds); err != nil {
			t.Fatal(err)
		}
		procs, dests, domains, err := db.AgentNewNames(ctx, a1, aiNow-7*86400, aiNow-86400, 10)
		if err != nil {
			t.Fatal(err)
		}
		wantProcs := []store.NewName{{Name: "miner", FirstTS: aiNow - 7200, Total: 10000}, {Name: "curl", FirstTS: aiNow - 600, Total: 400}}
		wantDests := []store.NewName{{Name: "miner tcp 203.0.113.66 443", FirstTS: aiNow - 7200, Total: 5000}, {Name: "curl tcp 198.51.100.3 443", FirstTS: aiNow - 600, Total: 200}}
		wantDomains := []store.NewName{{Name: "pool.example", FirstTS: aiNow - 7200, Total: 50}, {Name: "api.example", FirstTS: aiNow - 600, Total: 2}}
		for _, c := range []struct {
			what      string
			want, got []store.NewName
		}{{"processes", wantProcs, procs}, {"destinations", wantDests, dests}, {"domains", wantDomains, domains}} {
			if d := cmp.Diff(c.want, c.got); d != "" {
				t.Errorf("%s (-want +got):\n%s", c.what, d)
			}
		}
		procs, _, _, err = db.AgentNewNames(ctx, a1, aiNow-7*86400, aiNow-86400, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wantProcs[:1], procs); d != "" {
			t.Errorf("limit 1 (-want +got):\n%s", d)
		}
	})
}

// TestOpenAlertsAndIncidents: open events only (firing, ack), by site,
// agent or device; counts by kind, severity and state; the most severe
// then the latest first; open incidents the riskiest first, with the
// count of all.
func TestOpenAlertsAndIncidents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ins := func(e record.AlertEvent) int64 {
			e.TS = aiNow - 100
			if e.LastTS == 0 {
				e.LastTS = e.TS
			}
			got, err := db.InsertAlertEvent(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			return got.ID
		}
		p1 := ins(record.AlertEvent{Kind: "port", Key: "1|192.0.2.5:4444", Severity: 9, State: "firing", Site: "n", AgentID: 1, Count: 3, LastTS: aiNow - 10})
		p2 := ins(record.AlertEvent{Kind: "proc", Key: "1|nc", Severity: 4, State: "ack", Site: "n", AgentID: 1, LastTS: aiNow - 50})
		p3 := ins(record.AlertEvent{Kind: "proc", Key: "2|nc", Severity: 4, State: "firing", Site: "n", AgentID: 2, LastTS: aiNow - 20})
		ins(record.AlertEvent{Kind: "proc", Key: "1|old", Severity: 4, State: "resolved", Site: "n", AgentID: 1})
		v := ins(record.AlertEvent{Kind: "vpn_down", Key: "7|root/hq", Severity: 8, State: "firing", Site: "n"})
		ins(record.AlertEvent{Kind: "high_sessions", Key: "77", Severity: 5, State: "firing", Site: "n"})
		ins(record.AlertEvent{Kind: "port", Key: "3|x", Severity: 9, State: "firing", Site: "s", AgentID: 3})

		counts, err := db.OpenAlertCounts(ctx, store.OpenAlertQuery{Site: "n"})
		if err != nil {
			t.Fatal(err)
		}
		wantCounts := []store.AlertCount{
			{Kind: "port", Severity: 9, State: "firing", Events: 1, Repeats: 3},
			{Kind: "vpn_down", Severity: 8, State: "firing", Events: 1, Repeats: 1},
			{Kind: "high_sessions", Severity: 5, State: "firing", Events: 1, Repeats: 1},
			{Kind: "proc", Severity: 4, State: "ack", Events: 1, Repeats: 1},
			{Kind: "proc", Severity: 4, State: "firing", Events: 1, Repeats: 1},
		}
		if d := cmp.Diff(wantCounts, counts); d != "" {
			t.Errorf("counts (-want +got):\n%s", d)
		}
		for _, tc := range []struct {
			name  string
			q     store.OpenAlertQuery
			limit int
			want  []int64
		}{
			{"site n", store.OpenAlertQuery{Site: "n"}, 3, []int64{p1, v, openID(t, db, "77")}},
			{"agent 1", store.OpenAlertQuery{AgentID: 1}, 10, []int64{p1, p2}},
			{"device 7", store.OpenAlertQuery{DeviceID: 7}, 10, []int64{v}},
			{"device 7 of site s", store.OpenAlertQuery{DeviceID: 7, Site: "s"}, 10, nil},
			{"agent 2", store.OpenAlertQuery{AgentID: 2, Site: "n"}, 10, []int64{p3}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				evs, err := db.TopOpenAlerts(ctx, tc.q, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, e := range evs {
					got = append(got, e.ID)
				}
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("ids (-want +got):\n%s", d)
				}
			})
		}

		mk := func(key string, agent int64, site string, risk int, members ...int64) int64 {
			inc, _, err := db.UpsertIncident(ctx, record.Incident{Key: key, Rule: 1, AgentID: agent, Site: site, Severity: 5, Risk: risk, Title: key, OpenedTS: aiNow - 50, UpdatedTS: aiNow - 50}, members)
			if err != nil {
				t.Fatal(err)
			}
			return inc.ID
		}
		i1 := mk("r1|agent1", 1, "n", 40, p1)
		i2 := mk("r2|agent1", 1, "n", 80, p2)
		i3 := mk("r1|agent3", 3, "s", 90)
		done := mk("r3|agent1", 1, "n", 99)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetIncidentState(ctx, done, record.IncidentClosed, aiNow) }); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name      string
			site      string
			agent     int64
			limit     int
			want      []int64
			wantTotal int64
		}{
			{"all", "", 0, 10, []int64{i3, i2, i1}, 3},
			{"site n, limit 1", "n", 0, 1, []int64{i2}, 2},
			{"agent 3 in site n", "n", 3, 10, nil, 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				incs, total, err := db.OpenIncidents(ctx, tc.site, tc.agent, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, i := range incs {
					got = append(got, i.ID)
				}
				if d := cmp.Diff(tc.want, got); d != "" || total != tc.wantTotal {
					t.Errorf("ids (-want +got):\n%s total %d, want %d", d, total, tc.wantTotal)
				}
			})
		}
	})
}

// openID finds the id of the open event with key (a helper of the table).
func openID(t *testing.T, db *store.DB, key string) int64 {
	t.Helper()
	evs, err := db.ListAlertEvents(context.Background(), store.AlertFilter{Open: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Key == key {
			return e.ID
		}
	}
	t.Fatalf("no open event %q", key)
	return 0
}

// TestBusiestIfaces: each device's latest poll only, interfaces with a
// known utilisation, the busier direction, highest first; a site keeps
// its devices.
func TestBusiestIfaces(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var d1, d2 int64
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			if d1, err = tx.InsertDevice(ctx, store.Device{Name: "sw1", Host: "192.0.2.1", Site: "n", Enabled: true, CreatedAt: 1}); err != nil {
				return err
			}
			d2, err = tx.InsertDevice(ctx, store.Device{Name: "sw2", Host: "192.0.2.2", Site: "s", Enabled: true, CreatedAt: 1})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		f := func(v float64) *float64 { return &v }
		poll := func(dev, ts int64, ifs ...record.IfaceSample) {
			if err := db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: dev, TS: ts, SysName: "x", Ifaces: ifs}); err != nil {
				t.Fatal(err)
			}
		}
		poll(d1, aiNow-600, record.IfaceSample{IfIndex: 1, Name: "ge-0/0/1", OperUp: true, AdminUp: true, RxUtilPct: f(99)})
		poll(d1, aiNow-60,
			record.IfaceSample{IfIndex: 1, Name: "ge-0/0/1", OperUp: true, AdminUp: true, RxUtilPct: f(20), TxUtilPct: f(75), SpeedBps: 1e9},
			record.IfaceSample{IfIndex: 2, Name: "ge-0/0/2", OperUp: true, AdminUp: true, RxUtilPct: f(50)},
			record.IfaceSample{IfIndex: 3, Name: "ge-0/0/3", OperUp: false, AdminUp: true})
		poll(d2, aiNow-60, record.IfaceSample{IfIndex: 1, Name: "eth0", OperUp: true, AdminUp: true, TxUtilPct: f(60)})
		type row struct {
			Dev  int64
			If   int
			Util float64
		}
		for _, tc := range []struct {
			name  string
			site  string
			limit int
			want  []row
		}{
			{"all", "", 10, []row{{d1, 1, 75}, {d2, 1, 60}, {d1, 2, 50}}},
			{"site n, limit 1", "n", 1, []row{{d1, 1, 75}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := db.BusiestIfaces(ctx, tc.site, aiNow-3600, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				var rows []row
				for _, g := range got {
					rows = append(rows, row{g.DeviceID, g.IfIndex, g.UtilPct})
				}
				if d := cmp.Diff(tc.want, rows); d != "" {
					t.Errorf("(-want +got):\n%s", d)
				}
			})
		}
	})
}

// TestHostNames: agent and device names, sysNames and hosts that are
// names, of one site or all, once each, sorted; addresses and empty
// values are left out.
func TestHostNames(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		seedAIAgents(t, db, [][2]string{{"web-01", "n"}, {"pay-01", "s"}, {"db-01", "n"}})
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for _, d := range []store.Device{
				{Name: "core-sw1", Host: "10.1.0.1", Site: "n"},
				{Name: "fw-01", Host: "fw-01.corp.example", Site: "n"},
				{Name: "web-01", Site: "n"}, // a topology node named like an agent
				{Name: "sw-south", Host: "sw-south.corp.example", Site: "s"},
			} {
				d.Enabled, d.CreatedAt = true, 1
				if _, err := tx.InsertDevice(ctx, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			site string
			want []string
		}{
			{"n", []string{"core-sw1", "db-01", "fw-01", "fw-01.corp.example", "web-01"}},
			{"", []string{"core-sw1", "db-01", "fw-01", "fw-01.corp.example", "pay-01", "sw-south", "sw-south.corp.example", "web-01"}},
		} {
			got, err := db.HostNames(ctx, tc.site)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("site %q (-want +got):\n%s", tc.site, d)
			}
		}
	})
}
