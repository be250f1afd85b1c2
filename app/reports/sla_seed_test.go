package reports_test

import (
	"context"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/record"
)

// The seeded network of the SLA tests. The window of a 24 h target ends
// at slaEnd, a whole minute (1 800 000 000 s is 30 000 000 minutes); the
// clock starts 30 s into the next minute, which the window leaves out.
const (
	slaEnd   = int64(1_800_000_000)
	slaStart = slaEnd - 1440*60
)

func slaMinute(i int) int64 { return slaStart + int64(i)*60 }

// slaNet is what seedSLA stored.
type slaNet struct {
	a, b, c int64 // agents
	d1, d2  int64 // devices
}

// seedSLA stores, with the figures each 24 h measurement gives:
//
// Agents (agent_uptime):
//   - a, site ist, enrolled a day before the window: batches in minutes
//     0..1379, so 1380 of 1440 minutes = 95.8333 %.
//   - b, site ist, enrolled 30 s into minute 720: 720 minutes expected
//     (720..1439), batches in 720..1419 = 700: 97.2222 %.
//   - c, site ank: every minute, 1440 of 1440 = 100 %.
//     Site ist: (95.8333 + 97.2222) / 2 = 96.53 %; every site:
//     (95.8333 + 97.2222 + 100) / 3 = 97.69 %.
//
// Devices (device_availability), polled every 10 minutes, in minutes 5,
// 15, .., 1435 (144 polls):
//   - d1, site ist: the polls of minutes 105, 115, 125 failed: 141 of 144
//     answered = 97.92 %.
//   - d2, site ank: 144 of 144 = 100 %. Every site: (97.9167 + 100) / 2
//     = 98.96 %.
//
// Interfaces (iface_util_p95), the 20 polls of minutes 205..395:
//   - d1 ifIndex 1: rx 1..20 % over 20 polls, nearest rank ⌈0.95·20⌉ = 19:
//     19 %; ifIndex 2: tx 10, 20, .., 100 % over its first 10 polls, rank
//     ⌈9.5⌉ = 10: 100 %. Site ist (busiest interface): 100 %.
//   - d2 ifIndex 1: 50 % in each of its 20 polls: 50 %.
//
// Capture (packet_drop): minute 600 read 99 000 packets and dropped 1 000:
// 1 000 / 100 000 = 1.00 %.
func seedSLA(t *testing.T, db *store.DB) slaNet {
	t.Helper()
	ctx := context.Background()
	var n slaNet
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for _, a := range []struct {
			id       *int64
			name     string
			site     string
			enrolled int64
		}{{&n.a, "a", "ist", slaStart - 86400}, {&n.b, "b", "ist", slaMinute(720) + 30}, {&n.c, "c", "ank", slaStart}} {
			var err error
			if *a.id, _, err = tx.CreateAgent(ctx, store.Agent{Name: a.name, Site: a.site, TokenHash: "h-" + a.name, EnrolledAt: a.enrolled}); err != nil {
				return err
			}
		}
		var err error
		if n.d1, err = tx.InsertDevice(ctx, store.Device{Name: "sw-ist", Host: "192.0.2.1", Kind: "switch", Site: "ist", SNMPVersion: "2c"}); err != nil {
			return err
		}
		n.d2, err = tx.InsertDevice(ctx, store.Device{Name: "sw-ank", Host: "192.0.2.2", Kind: "switch", Site: "ank", SNMPVersion: "2c"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var tel []record.Telemetry
	batch := func(agent int64, from, to int) {
		for m := from; m < to; m++ {
			tel = append(tel, record.Telemetry{AgentID: agent, Seq: uint64(m + 1), TS: slaMinute(m) + 7, HasRates: true,
				Rates: []byte(`[]`), Counters: []byte(`[]`), Connections: []byte(`[]`)})
		}
	}
	batch(n.a, 0, 1380)
	batch(n.b, 720, 1420)
	batch(n.c, 0, 1440)
	if _, err := db.WriteTelemetry(ctx, tel); err != nil {
		t.Fatal(err)
	}
	pct := func(v float64) *float64 { return &v }
	for m := 5; m < 1440; m += 10 {
		p1 := record.DevicePoll{DeviceID: n.d1, TS: slaMinute(m) + 3}
		p2 := record.DevicePoll{DeviceID: n.d2, TS: slaMinute(m) + 3}
		if m >= 100 && m < 130 {
			p1.Err = "request timeout"
		}
		if k := (m-205)/10 + 1; m >= 205 && k <= 20 {
			p1.Ifaces = []record.IfaceSample{{IfIndex: 1, RxUtilPct: pct(float64(k)), TxUtilPct: pct(0)}}
			if k <= 10 {
				p1.Ifaces = append(p1.Ifaces, record.IfaceSample{IfIndex: 2, RxUtilPct: pct(0), TxUtilPct: pct(float64(10 * k))})
			}
			p2.Ifaces = []record.IfaceSample{{IfIndex: 1, RxUtilPct: pct(50), TxUtilPct: pct(50)}}
		}
		for _, p := range []record.DevicePoll{p1, p2} {
			if err := db.SaveDevicePoll(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.AddTrafficMinute(ctx, store.TrafficMinute{TS: slaMinute(600), Packets: 99_000, Dropped: 1_000, Seconds: 60}); err != nil {
		t.Fatal(err)
	}
	return n
}

// clock is the tests' time, shared by the evaluator and the alert engine.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Unix(slaEnd+30, 0)} }
