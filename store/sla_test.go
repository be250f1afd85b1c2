package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// slaTo ends the measured windows: a whole minute (1 800 000 000 is
// 30 000 000 minutes), so every minute below is exact.
const (
	slaTo   = int64(1_800_000_000)
	slaFrom = slaTo - 1440*60 // 24 h: 1440 minutes
)

func minute(i int) int64 { return slaFrom + int64(i)*60 }

func slaAgent(t *testing.T, db *store.DB, name, site string, enrolled int64) int64 {
	t.Helper()
	var id int64
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		id, _, err = tx.CreateAgent(context.Background(), store.Agent{Name: name, Site: site, TokenHash: "h-" + name, EnrolledAt: enrolled})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func slaDevice(t *testing.T, db *store.DB, name, site string) int64 {
	t.Helper()
	var id int64
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		id, err = tx.InsertDevice(context.Background(), store.Device{Name: name, Host: "192.0.2.1", Kind: "switch", Site: site, SNMPVersion: "2c"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// report stores one telemetry batch of agent per listed minute, at
// second off of the minute.
func report(t *testing.T, db *store.DB, agent int64, seq *uint64, off int64, minutes ...int) {
	t.Helper()
	var ts []record.Telemetry
	for _, m := range minutes {
		*seq++
		ts = append(ts, record.Telemetry{AgentID: agent, Seq: *seq, TS: minute(m) + off, HasRates: true,
			Rates: []byte(`[]`), Counters: []byte(`[]`), Connections: []byte(`[]`)})
	}
	if _, err := db.WriteTelemetry(context.Background(), ts); err != nil {
		t.Fatal(err)
	}
}

func span(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// TestAgentUptime: minutes reported per agent, from the enrollment's
// minute on, on both databases.
func TestAgentUptime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		// a (ist): enrolled long before; batches in minutes 0..1379 (1380
		// of 1440), a second batch in minute 0 (counted once), one a
		// minute before the window (not counted).
		a := slaAgent(t, db, "a", "ist", slaFrom-86400)
		var seq uint64
		report(t, db, a, &seq, 5, span(0, 1380)...)
		report(t, db, a, &seq, 35, 0, -1)
		// b (ist): enrolled at minute 720 + 30 s, so minutes 720..1439
		// (720) are expected; batches in 720..1419 (700), and one in
		// minute 100, before its enrollment, not counted.
		b := slaAgent(t, db, "b", "ist", minute(720)+30)
		var seqB uint64
		report(t, db, b, &seqB, 0, span(720, 1420)...)
		report(t, db, b, &seqB, 0, 100)
		// c (ank): every minute; and one at the window's end, not counted.
		c := slaAgent(t, db, "c", "ank", slaFrom)
		var seqC uint64
		report(t, db, c, &seqC, 59, span(0, 1441)...)
		// d (ist): enrolled after the window: left out.
		slaAgent(t, db, "d", "ist", slaTo+60)

		tests := []struct {
			desc  string
			scope store.SLAScope
			want  []store.AgentMinutes
		}{
			{"every site", store.SLAScope{}, []store.AgentMinutes{{a, 1440, 1380}, {b, 720, 700}, {c, 1440, 1440}}},
			{"site ist", store.SLAScope{Site: "ist"}, []store.AgentMinutes{{a, 1440, 1380}, {b, 720, 700}}},
			{"agent b", store.SLAScope{AgentID: b}, []store.AgentMinutes{{b, 720, 700}}},
			{"agent b of the wrong site", store.SLAScope{Site: "ank", AgentID: b}, []store.AgentMinutes{}},
			{"no such site", store.SLAScope{Site: "nowhere"}, []store.AgentMinutes{}},
		}
		for _, tt := range tests {
			t.Run(tt.desc, func(t *testing.T) {
				// from and to are taken down to the minute: +59 s changes nothing.
				got, err := db.AgentUptime(ctx, tt.scope, slaFrom+59, slaTo+59)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("AgentUptime (-got, +want):\n%s", diff)
				}
			})
		}
	})
}

func pct(v float64) *float64 { return &v }

// TestDeviceMeasurements: poll outcomes per device (written by
// SaveDevicePoll itself and in bulk) and the interfaces' p95.
func TestDeviceMeasurements(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		d1 := slaDevice(t, db, "sw-ist", "ist")
		d2 := slaDevice(t, db, "sw-ank", "ank")
		quiet := slaDevice(t, db, "never-polled", "ist")
		_ = quiet
		// d1: if 1 rx 1..20 % over 20 polls (nearest rank ⌈0.95·20⌉ = 19:
		// 19 %); if 2 rx 0, tx 10..100 % over 10 polls (rank ⌈9.5⌉ = 10:
		// 100 %); if 3 has no speed (no utilisation): left out. A poll
		// before the window (if 1 at 99 %) is not counted. 21 ok polls
		// in the window, one failed poll in the window, and one ok poll
		// before it.
		for k := 1; k <= 20; k++ {
			ifs := []record.IfaceSample{{IfIndex: 1, RxUtilPct: pct(float64(k)), TxUtilPct: pct(0)}, {IfIndex: 3}}
			if k <= 10 {
				ifs = append(ifs, record.IfaceSample{IfIndex: 2, RxUtilPct: pct(0), TxUtilPct: pct(float64(10 * k))})
			}
			if err := db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: d1, TS: minute(k), Ifaces: ifs}); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []record.DevicePoll{
			{DeviceID: d1, TS: minute(-1), Ifaces: []record.IfaceSample{{IfIndex: 1, RxUtilPct: pct(99)}}},
			{DeviceID: d1, TS: minute(30) + 20, Err: "timeout"},
			{DeviceID: d1, TS: minute(30) + 40},
			// d2: one poll, if 1 with only tx known: 50 %.
			{DeviceID: d2, TS: minute(5), Ifaces: []record.IfaceSample{{IfIndex: 1, TxUtilPct: pct(50)}}},
		} {
			if err := db.SaveDevicePoll(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		// d2 in bulk: 1000 answered and 40 not in minute 600.
		if err := db.AddDevicePolls(ctx, d2, minute(600), 1000, 40); err != nil {
			t.Fatal(err)
		}

		polls := []struct {
			desc  string
			scope store.SLAScope
			want  []store.DevicePollCount
		}{
			// d1: polls 1..20 and the one at minute 30 answered (21), one
			// failed; minute -1 is outside.
			{"every site", store.SLAScope{}, []store.DevicePollCount{{d1, 21, 1}, {d2, 1001, 40}}},
			{"site ank", store.SLAScope{Site: "ank"}, []store.DevicePollCount{{d2, 1001, 40}}},
			{"device d1", store.SLAScope{DeviceID: d1}, []store.DevicePollCount{{d1, 21, 1}}},
			{"never polled", store.SLAScope{DeviceID: quiet}, []store.DevicePollCount{}},
		}
		for _, tt := range polls {
			t.Run("polls "+tt.desc, func(t *testing.T) {
				got, err := db.DevicePolls(ctx, tt.scope, slaFrom, slaTo)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("DevicePolls (-got, +want):\n%s", diff)
				}
			})
		}
		p95 := []struct {
			desc  string
			scope store.SLAScope
			want  []store.IfaceP95
		}{
			{"every site", store.SLAScope{}, []store.IfaceP95{{d1, 2, 100, 10}, {d2, 1, 50, 1}, {d1, 1, 19, 20}}},
			{"site ist", store.SLAScope{Site: "ist"}, []store.IfaceP95{{d1, 2, 100, 10}, {d1, 1, 19, 20}}},
			{"device d2", store.SLAScope{DeviceID: d2}, []store.IfaceP95{{d2, 1, 50, 1}}},
			{"never polled", store.SLAScope{DeviceID: quiet}, []store.IfaceP95{}},
		}
		for _, tt := range p95 {
			t.Run("p95 "+tt.desc, func(t *testing.T) {
				got, err := db.IfaceUtilP95(ctx, tt.scope, slaFrom, slaTo)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(got, tt.want); diff != "" {
					t.Errorf("IfaceUtilP95 (-got, +want):\n%s", diff)
				}
			})
		}
	})
}

// TestCaptureDrops: dropped packets add up per minute like the rest of
// a traffic minute, and only the window's minutes count.
func TestCaptureDrops(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, m := range []store.TrafficMinute{
			{TS: minute(0), Packets: 9000, Dropped: 100, Seconds: 60},
			{TS: minute(0), Packets: 900, Dropped: 50, Seconds: 1}, // a restarted capture adds up
			{TS: minute(1), Packets: 50, Seconds: 60},
			{TS: minute(-1), Packets: 1, Dropped: 1000, Seconds: 60},
		} {
			if err := db.AddTrafficMinute(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		packets, dropped, err := db.CaptureDrops(ctx, slaFrom, slaTo)
		if err != nil || packets != 9950 || dropped != 150 {
			t.Errorf("CaptureDrops = %d, %d, %v; want 9950, 150", packets, dropped, err)
		}
		packets, dropped, err = db.CaptureDrops(ctx, slaTo, slaTo+3600)
		if err != nil || packets != 0 || dropped != 0 {
			t.Errorf("CaptureDrops of an empty window = %d, %d, %v; want 0, 0", packets, dropped, err)
		}
	})
}

// TestSLATargetRows: insert, list by site, and delete that refuses
// another site's id exactly as a missing one.
func TestSLATargetRows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		rows := []store.SLATarget{
			{Name: "office uptime", Metric: "agent_uptime", Scope: "site", Site: "ist", Threshold: 99, WindowHours: 24, CreatedAt: 5, CreatedBy: "ayşe"},
			{Name: "core p95", Metric: "iface_util_p95", Scope: "device", Site: "ank", DeviceID: 7, Threshold: 80.5, WindowHours: 168, CreatedAt: 6, CreatedBy: "admin"},
		}
		for i := range rows {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				rows[i].ID, err = tx.InsertSLATarget(ctx, rows[i])
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			site string
			want []store.SLATarget
		}{{"", rows}, {"ist", rows[:1]}, {"ank", rows[1:]}, {"x", []store.SLATarget{}}} {
			got, err := db.SLATargets(ctx, tc.site)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("SLATargets(%q) (-got, +want):\n%s", tc.site, diff)
			}
		}
		del := func(site string, id int64) (store.SLATarget, error) {
			var out store.SLATarget
			err := db.InTx(ctx, func(tx *store.Tx) error {
				var err error
				out, err = tx.DeleteSLATarget(ctx, site, id)
				return err
			})
			return out, err
		}
		if _, err := del("ist", rows[1].ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete of another site's target: %v, want ErrNotFound", err)
		}
		if _, err := del("", 999); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete of a missing target: %v, want ErrNotFound", err)
		}
		got, err := del("ank", rows[1].ID)
		if err != nil || got != rows[1] {
			t.Errorf("delete = %+v, %v; want %+v", got, err, rows[1])
		}
		if left, _ := db.SLATargets(ctx, ""); len(left) != 1 || left[0].ID != rows[0].ID {
			t.Errorf("left %+v, want only %d", left, rows[0].ID)
		}
	})
}
