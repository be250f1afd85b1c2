package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

func pct(v float64) *float64 { return &v }

func addDevice(t testing.TB, db *store.DB, d store.Device) int64 {
	t.Helper()
	var id int64
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		id, err = tx.InsertDevice(context.Background(), d)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func addAgent(t testing.TB, db *store.DB, name, ip, site string) int64 {
	t.Helper()
	var id int64
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		id, _, err = tx.CreateAgent(context.Background(), store.Agent{Name: name, RemoteIP: ip, Site: site, MachineID: name, TokenHash: name})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestBuild: discovered links (LLDP both ways: one link; CDP to a
// neighbour that is no device), an inferred one (ARP entry of an
// agent's address; an unknown address is not drawn), a manual uplink,
// status from the busier end, 24 h expiry, and site scope. Both
// databases.
func TestBuild(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now()
		acc := addDevice(t, db, store.Device{Name: "access", Host: "10.0.0.11", Kind: "switch", Site: "a", SNMPVersion: "2c", PollSeconds: 60, Enabled: true})
		core := addDevice(t, db, store.Device{Name: "core", Host: "10.0.0.1", Kind: "router", Site: "a", SNMPVersion: "2c", PollSeconds: 60, Enabled: true})
		other := addDevice(t, db, store.Device{Name: "b-switch", Site: "b", Kind: "switch", SNMPVersion: "2c", PollSeconds: 60, Enabled: true})
		ag := addAgent(t, db, "laptop", "10.0.0.50", "a")
		ag2 := addAgent(t, db, "server", "192.0.2.9", "a")
		ts := now.Unix()
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: acc, TS: ts, SysName: "access-sw1",
			Ifaces: []record.IfaceSample{{IfIndex: 4, Name: "eth0", OperUp: true, SpeedBps: 1e9, RxUtilPct: pct(75), TxUtilPct: pct(10)},
				{IfIndex: 5, Name: "eth1", OperUp: false}},
			Neighbors: []record.Neighbor{
				{Source: "lldp", LocalPort: "eth0", RemoteName: "CORE-SW1", RemotePort: "Gi1/0/24", RemoteAddr: "10.0.0.1"},
				{Source: "cdp", LocalPort: "eth1", RemoteName: "dist-sw2", RemotePort: "Gi1/0/1", RemoteAddr: "10.0.0.2"},
				{Source: "arp", LocalPort: "eth0", RemoteAddr: "10.0.0.50"},
				{Source: "arp", LocalPort: "eth0", RemoteAddr: "10.0.0.99"},
			}}))
		must(db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: core, TS: ts - 30, SysName: "core-sw1",
			Ifaces:    []record.IfaceSample{{IfIndex: 24, Name: "Gi1/0/24", OperUp: true, SpeedBps: 1e9, RxUtilPct: pct(91), TxUtilPct: pct(5)}},
			Neighbors: []record.Neighbor{{Source: "lldp", LocalPort: "Gi1/0/24", RemoteName: "access-sw1", RemotePort: "eth0"}}}))
		must(db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: other, TS: ts, Err: "timeout"}))
		must(db.InTx(ctx, func(tx *store.Tx) error { return tx.SetUplink(ctx, "agent", ag2, core, "Gi1/0/2", ts-100) }))
		// A link last seen 25 h ago is gone; a manual one that old stays.
		must(db.InsertTopoEdges(ctx, []store.TopoEdge{{AKind: "device", AID: acc, APort: "eth9", BKind: "neighbor", BName: "old-sw", Source: "lldp", TS: ts - 25*3600}}))

		s := New(nil, DefaultConfig(), Deps{Store: db})
		s.now = func() time.Time { return now }
		topo, err := s.Build(ctx, "")
		must(err)
		var got []string
		for _, l := range topo.Links {
			u := "-"
			if l.UtilPct != nil {
				u = fmt.Sprint(*l.UtilPct)
			}
			got = append(got, fmt.Sprintf("%s %s:%s -> %s:%s %s %s %s %s %d", l.ID, l.Source, l.SourcePort, l.Target, l.TargetPort, l.Kind, l.Confidence, l.Status, u, l.TS))
		}
		d := func(id int64) string { return fmt.Sprintf("device:%d", id) }
		a := func(id int64) string { return fmt.Sprintf("agent:%d", id) }
		want := []string{
			fmt.Sprintf("%s|%s %s:eth0 -> %s: arp inferred warning 75 %d", a(ag), d(acc), d(acc), a(ag), ts),
			fmt.Sprintf("%s|%s %s: -> %s:Gi1/0/2 manual manual unknown - %d", a(ag2), d(core), a(ag2), d(core), ts-100),
			fmt.Sprintf("%s|%s %s:eth0 -> %s:Gi1/0/24 lldp discovered critical 91 %d", d(acc), d(core), d(acc), d(core), ts),
			fmt.Sprintf("%s|neighbor:dist-sw2 %s:eth1 -> neighbor:dist-sw2:Gi1/0/1 cdp discovered down - %d", d(acc), d(acc), ts),
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("links:\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if len(topo.Devices) != 4 || topo.Devices[3].ID != "neighbor:dist-sw2" || topo.Devices[3].Managed || topo.Devices[3].Host != "10.0.0.2" ||
			topo.Devices[0].Status != "up" || topo.Devices[2].Status != "error" || topo.Devices[2].LastError != "timeout" || len(topo.Agents) != 2 {
			b, _ := json.Marshal(topo)
			t.Errorf("elements: %s", b)
		}

		// Site b sees its own switch only.
		topoB, err := s.Build(ctx, "b")
		must(err)
		if len(topoB.Devices) != 1 || topoB.Devices[0].DeviceID != other || len(topoB.Agents) != 0 || len(topoB.Links) != 0 {
			t.Errorf("site b: %+v", topoB)
		}

		// Expiry deletes the stale edge only.
		if n, err := db.PruneTopologyEdges(ctx, now.Add(-EdgeTTL).Unix()); err != nil || n != 1 {
			t.Errorf("pruned %d (%v), want 1", n, err)
		}
	})
}

func TestStatus(t *testing.T) {
	for _, c := range []struct {
		util *float64
		down bool
		want string
	}{{nil, false, "unknown"}, {pct(0), false, "normal"}, {pct(69.9), false, "normal"}, {pct(70), false, "warning"},
		{pct(89.99), false, "warning"}, {pct(90), false, "critical"}, {pct(100), false, "critical"}, {pct(10), true, "down"}} {
		if got := Status(c.util, c.down); got != c.want {
			t.Errorf("Status(%v, %v) = %s, want %s", c.util, c.down, got, c.want)
		}
	}
}
