package hub

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"netmon/agentmode/wire"
	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestAgentConnectionRules: port and proc fire from an agent's telemetry
// through the real path (intake → agents row → the engine's inventory
// input → store): the port event repeats (count) on its one row, proc
// stays silent on the agent's first inventory and fires on a process it
// had not seen.
func TestAgentConnectionRules(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		// The engine's loops are off: the test runs the 5-second cycle.
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) { c.Alerts.Enabled = false })
		ctx := context.Background()
		admin.call("PUT", "/api/alerts", `{"ports":{"enabled":true,"ports":[4444]},"new_proc":{"enabled":true,"ignore":["chrome"]}}`).must(t, 200)
		a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-1", MachineID: "m-alerts"}))
		send := func(seq uint64, procs ...string) {
			b := wire.Telemetry{TS: time.Now().Unix(), Seq: seq, Interfaces: []wire.Interface{{Name: "eth0"}}}
			b.Connections = append(b.Connections, wire.Connection{Proto: "tcp", LocalAddr: "10.0.0.5:50000", RemoteAddr: "198.51.100.7:4444", Status: "ESTABLISHED", PID: 10, Process: "nc"})
			for i, p := range procs {
				b.Connections = append(b.Connections, wire.Connection{Proto: "tcp", LocalAddr: fmt.Sprintf("10.0.0.5:%d", 50001+i), RemoteAddr: "203.0.113.9:443", Status: "ESTABLISHED", PID: int32(20 + i), Process: p})
			}
			telemetry(t, h, a.AgentToken, b).must(t, 200)
			eventually(t, "the batch stored", func() bool {
				ag, err := h.db.Agent(ctx, a.AgentID)
				return err == nil && ag.Conns == len(b.Connections)
			})
		}
		agentEvents := func() []record.AlertEvent {
			evs, err := h.db.ListAlertEvents(ctx, store.AlertFilter{AgentID: a.AgentID})
			if err != nil {
				t.Fatal(err)
			}
			return evs
		}

		send(1, "curl")
		h.alerts.EvalInventory(ctx)
		evs := agentEvents()
		if len(evs) != 1 || evs[0].Kind != "port" || evs[0].Key != fmt.Sprintf("%d|198.51.100.7:4444", a.AgentID) || evs[0].Severity != 9 || evs[0].Count != 1 {
			t.Fatalf("after the first inventory: %+v", evs)
		}

		send(2, "curl", "chrome", "socat")
		h.alerts.EvalInventory(ctx)
		evs = agentEvents()
		if len(evs) != 2 {
			t.Fatalf("after the second inventory: %+v", evs)
		}
		proc, port := evs[0], evs[1]
		if proc.Kind != "proc" || proc.Key != fmt.Sprintf("%d|socat", a.AgentID) || proc.Severity != 4 {
			t.Errorf("proc event: %+v", proc)
		}
		if port.Count != 2 {
			t.Errorf("port event count %d, want 2 (a repeat while firing)", port.Count)
		}
	})
}

// TestAgentPortCountPerBatch: a port event's count is the number of
// batches that showed the connection, whatever the number of 5-second
// cycles in between (each cycle used to evaluate every agent's last
// inventory again, so the count grew by one per cycle, not per batch),
// and an agent whose clock runs ahead of another's does not hide the
// other's later batches (the read cursor used to be the highest
// agent-stamped last_seen of all agents).
func TestAgentPortCountPerBatch(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) { c.Alerts.Enabled = false })
		ctx := context.Background()
		admin.call("PUT", "/api/alerts", `{"ports":{"enabled":true,"ports":[4444]}}`).must(t, 200)
		a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-a", MachineID: "m-count-a"}))
		b := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-b", MachineID: "m-count-b"}))
		send := func(ag wire.HelloResponse, seq uint64, ts int64) {
			batch := wire.Telemetry{TS: ts, Seq: seq, Interfaces: []wire.Interface{{Name: "eth0"}},
				Connections: []wire.Connection{{Proto: "tcp", LocalAddr: "10.0.0.5:50000", RemoteAddr: "198.51.100.7:4444", Status: "ESTABLISHED", PID: 10, Process: "nc"}}}
			telemetry(t, h, ag.AgentToken, batch).must(t, 200)
			eventually(t, "the batch stored", func() bool {
				row, err := h.db.Agent(ctx, ag.AgentID)
				return err == nil && row.LastSeq == seq
			})
		}
		cycles := func(n int) {
			for range n {
				h.alerts.EvalInventory(ctx)
			}
		}
		count := func(ag wire.HelloResponse) int64 {
			evs, err := h.db.ListAlertEvents(ctx, store.AlertFilter{AgentID: ag.AgentID, Kind: "port"})
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 {
				t.Fatalf("agent %d port events: %+v", ag.AgentID, evs)
			}
			return evs[0].Count
		}
		now := time.Now().Unix()
		send(a, 1, now)
		send(b, 1, now+3600) // b's clock is an hour ahead
		cycles(4)
		if ca, cb := count(a), count(b); ca != 1 || cb != 1 {
			t.Fatalf("after one batch each and 4 cycles: counts %d and %d, want 1 and 1", ca, cb)
		}
		send(a, 2, now+1)
		cycles(4)
		if ca, cb := count(a), count(b); ca != 2 || cb != 1 {
			t.Fatalf("after a's second batch and 4 cycles: counts %d and %d, want 2 and 1", ca, cb)
		}
		send(a, 3, now+2)
		send(b, 2, now+3601)
		cycles(1)
		if ca, cb := count(a), count(b); ca != 3 || cb != 2 {
			t.Fatalf("after a third and a second batch: counts %d and %d, want 3 and 2", ca, cb)
		}
	})
}

// TestAgentIfaceUtil: iface_util fires from an agent's counters through
// the real intake (rates between two batches, stored with the link speed
// the agent reported) and the hub's interface input: eth0 moves 95% of
// its 100 Mbit/s and fires crit once, then counts a repeat; eth1 moves
// as much on an unknown speed (0, an old agent or -1 in sysfs) and eth2
// 10% of 1 Gbit/s: neither fires.
func TestAgentIfaceUtil(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, admin := fleetHub(t, dsn, func(c *config.HubConfig) { c.Alerts.Enabled = false })
		ctx := context.Background()
		admin.call("PUT", "/api/alerts", `{"iface":{"warn_pct":50,"crit_pct":90,"sustain_sec":0}}`).must(t, 200)
		a := enrolled(t, hello(t, h, testStaticToken, wire.Hello{Name: "ws-if", MachineID: "m-iface"}))
		now := time.Now().Unix()
		send := func(seq uint64, ts int64, rx uint64) {
			b := wire.Telemetry{TS: ts, Seq: seq, Connections: []wire.Connection{}, Interfaces: []wire.Interface{
				{Name: "eth0", RxBytes: rx, TxBytes: 1000, SpeedMbps: 100},
				{Name: "eth1", RxBytes: rx, TxBytes: 1000},
				{Name: "eth2", RxBytes: rx, TxBytes: 1000, SpeedMbps: 1000},
			}}
			telemetry(t, h, a.AgentToken, b).must(t, 200)
			eventually(t, "the batch stored", func() bool {
				row, err := h.db.Agent(ctx, a.AgentID)
				return err == nil && row.LastSeq == seq
			})
		}
		events := func() []record.AlertEvent {
			evs, err := h.db.ListAlertEvents(ctx, store.AlertFilter{AgentID: a.AgentID, Kind: "iface_util"})
			if err != nil {
				t.Fatal(err)
			}
			return evs
		}
		send(1, now-10, 1_000_000)
		h.alerts.EvalInventory(ctx)
		if evs := events(); len(evs) != 0 {
			t.Fatalf("after the first batch (no rates yet): %+v", evs)
		}
		// 95 Mbit/s over 10 s: 118 750 000 bytes.
		send(2, now, 1_000_000+118_750_000)
		row, err := h.db.Agent(ctx, a.AgentID)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(row.Rates, `"name":"eth0","rx_bps":95000000,`) || !strings.Contains(row.Rates, `"speed_mbps":100}`) {
			t.Fatalf("stored rates: %s", row.Rates)
		}
		h.alerts.EvalInventory(ctx)
		evs := events()
		if len(evs) != 1 {
			t.Fatalf("iface_util events: %+v", evs)
		}
		e := evs[0]
		if e.Key != fmt.Sprintf("%d|eth0", a.AgentID) || e.Severity != 7 || e.Count != 1 || e.State != "firing" ||
			e.Message != "interface eth0 at 95% utilisation (crit) for 0s" {
			t.Fatalf("iface_util event: %+v", e)
		}
		h.alerts.EvalInventory(ctx)
		if evs := events(); len(evs) != 1 || evs[0].Count != 2 {
			t.Fatalf("after a second cycle: %+v", evs)
		}
	})
}
