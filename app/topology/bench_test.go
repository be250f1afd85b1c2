package topology

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// BenchmarkTopology: GET /api/v1/topology's work (Build and the JSON
// encoding) for 1 000 devices of 48 interfaces (each with its latest
// poll, two LLDP neighbours in a ring and 5 ARP entries) and 5 000
// agents (each in an ARP table; every tenth with a manual uplink).
// Target: under 200 ms.
func BenchmarkTopology(b *testing.B) {
	for _, open := range []struct {
		name string
		fn   func(testing.TB) *store.DB
	}{{"sqlite", storetest.OpenSQLite}, {"postgres", storetest.OpenPostgres}} {
		b.Run(open.name, func(b *testing.B) {
			db := open.fn(b)
			ctx := context.Background()
			now := time.Now()
			const nDev, nAgents = 1000, 5000
			ids := make([]int64, nDev)
			for i := range nDev {
				ids[i] = addDevice(b, db, store.Device{Name: fmt.Sprintf("sw%04d", i), Host: fmt.Sprintf("10.%d.%d.1", i/250, i%250), Kind: "switch",
					SNMPVersion: "2c", PollSeconds: 60, Enabled: true})
			}
			agentIP := func(j int) string { return fmt.Sprintf("10.100.%d.%d", j/250, j%250+1) }
			agents := make([]int64, nAgents)
			for j := range nAgents {
				agents[j] = addAgent(b, db, fmt.Sprintf("host%05d", j), agentIP(j), "")
			}
			for i, id := range ids {
				ifs := make([]record.IfaceSample, 48)
				for k := range ifs {
					u := float64((i*7 + k*13) % 100)
					ifs[k] = record.IfaceSample{IfIndex: k + 1, Name: fmt.Sprintf("Gi1/0/%d", k+1), OperUp: true, SpeedBps: 1e9, RxUtilPct: &u, TxUtilPct: &u}
				}
				nb := []record.Neighbor{
					{Source: "lldp", LocalPort: "Gi1/0/47", RemoteName: fmt.Sprintf("sw%04d", (i+1)%nDev), RemotePort: "Gi1/0/48"},
					{Source: "lldp", LocalPort: "Gi1/0/48", RemoteName: fmt.Sprintf("sw%04d", (i+nDev-1)%nDev), RemotePort: "Gi1/0/47"},
				}
				for k := range 5 {
					j := i*5 + k
					nb = append(nb, record.Neighbor{Source: "arp", LocalPort: fmt.Sprintf("Gi1/0/%d", k+1), RemoteAddr: agentIP(j)})
				}
				if err := db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: id, TS: now.Unix(), SysName: fmt.Sprintf("sw%04d", i), Ifaces: ifs, Neighbors: nb}); err != nil {
					b.Fatal(err)
				}
			}
			for j := 0; j < nAgents; j += 10 {
				if err := db.InTx(ctx, func(tx *store.Tx) error {
					return tx.SetUplink(ctx, "agent", agents[j], ids[j%nDev], "Gi1/0/10", now.Unix())
				}); err != nil {
					b.Fatal(err)
				}
			}
			s := New(nil, DefaultConfig(), Deps{Store: db})
			b.ResetTimer()
			var links, size int
			for range b.N {
				t, err := s.Build(ctx, "")
				if err != nil {
					b.Fatal(err)
				}
				out, err := json.Marshal(t)
				if err != nil {
					b.Fatal(err)
				}
				links, size = len(t.Links), len(out)
			}
			b.ReportMetric(float64(links), "links")
			b.ReportMetric(float64(size)/1024, "KiB")
		})
	}
}
