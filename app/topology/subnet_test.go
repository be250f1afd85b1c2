package topology

import (
	"context"
	"strconv"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestSubnetLinks: agents reporting their interface addresses are linked
// to the device on their network (the most specific network, then a
// switch before a router); an agent with an LLDP/ARP/manual link, with
// no device on its networks, or silent for over 24 h gets none; the
// agent's own address and loopback are not networks. Both databases.
func TestSubnetLinks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Unix(1_800_000_000, 0)
		router := addDevice(t, db, store.Device{Name: "gw", Host: "10.1.0.1", Kind: "router", SNMPVersion: "2c", Enabled: true})
		sw := addDevice(t, db, store.Device{Name: "sw", Host: "10.1.0.2:161", Kind: "switch", SNMPVersion: "2c", Enabled: true})
		core := addDevice(t, db, store.Device{Name: "core", Host: "10.9.0.1", Kind: "router", SNMPVersion: "2c", Enabled: true})
		a1 := addAgent(t, db, "a1", "198.51.100.1", "")
		a2 := addAgent(t, db, "a2", "198.51.100.2", "")
		a3 := addAgent(t, db, "a3", "198.51.100.3", "")
		a4 := addAgent(t, db, "a4", "198.51.100.4", "")
		a5 := addAgent(t, db, "a5", "198.51.100.5", "")
		batch := func(id int64, ts int64, counters string) record.Telemetry {
			return record.Telemetry{AgentID: id, Seq: 1, TS: ts, RemoteIP: "198.51.100.9", Rates: []byte("[]"), Counters: []byte(counters), Connections: []byte("[]"), AttrMethod: "off"}
		}
		_, err := db.WriteTelemetry(ctx, []record.Telemetry{
			// a1: /24 holds the router and the switch: the switch wins.
			batch(a1, now.Unix()-30, `[{"name":"lo","addrs":["127.0.0.1/8"]},{"name":"eth0","addrs":["10.1.0.50/24","fe80::1/64"]}]`),
			// a2: the /16 holds both, the /31 only the router: the /31 wins.
			batch(a2, now.Unix()-30, `[{"name":"eth0","addrs":["10.1.0.0/16"]},{"name":"eth1","addrs":["10.1.0.0/31"]}]`),
			// a3: no device on its network.
			batch(a3, now.Unix()-30, `[{"name":"eth0","addrs":["172.16.0.5/24"]}]`),
			// a4: on core's network, but silent for 25 h.
			batch(a4, now.Unix()-25*3600, `[{"name":"eth0","addrs":["10.9.0.7/24"]}]`),
			// a5: on core's network, but has a manual uplink to sw.
			batch(a5, now.Unix()-30, `[{"name":"eth0","addrs":["10.9.0.8/24"]}]`),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetUplink(ctx, "agent", a5, sw, "ge-0/0/5", now.Unix())
		}); err != nil {
			t.Fatal(err)
		}
		s := New(nil, DefaultConfig(), Deps{Store: db})
		s.now = func() time.Time { return now }
		topo, err := s.Build(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, l := range topo.Links {
			got[l.Source+" "+l.Target] = l.Kind + "/" + l.Confidence
			if l.Kind == "subnet" && (l.TS != now.Unix()-30 || l.Status != "unknown") {
				t.Errorf("subnet link %+v", l)
			}
		}
		want := map[string]string{
			agentID(a1) + " " + devID(sw):     "subnet/inferred",
			agentID(a2) + " " + devID(router): "subnet/inferred",
			agentID(a5) + " " + devID(sw):     "manual/manual",
		}
		if len(got) != len(want) {
			t.Errorf("links %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("link %s = %q, want %q (all: %v)", k, got[k], v, got)
			}
		}
		_ = core
	})
}

func agentID(id int64) string { return "agent:" + itoa(id) }
func devID(id int64) string   { return "device:" + itoa(id) }
func itoa(id int64) string    { return strconv.FormatInt(id, 10) }

// FuzzAgentPrefixes: the stored interface list is parsed without
// panicking; every network kept is valid and not loopback.
func FuzzAgentPrefixes(f *testing.F) {
	f.Add(`[{"name":"eth0","addrs":["10.1.0.50/24","127.0.0.1/8"]}]`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range agentPrefixes(s) {
			if !p.IsValid() || p.Addr().IsLoopback() {
				t.Fatalf("kept %v", p)
			}
		}
	})
}
