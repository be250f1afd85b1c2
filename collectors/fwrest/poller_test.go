package fwrest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"netmon/collectors/fwrest/fwtest"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// pollSaver is where a test's polls go (*store.DB, pollLog).
type pollSaver interface {
	SaveDevicePoll(ctx context.Context, p record.DevicePoll) error
}

// pollSave polls dev once through s and saves the result, as the device
// component's scheduler does.
func pollSave(t *testing.T, s *Session, dev record.Device, w pollSaver) error {
	t.Helper()
	out, err := s.Poll(context.Background(), dev)
	if serr := w.SaveDevicePoll(context.Background(), out); serr != nil {
		t.Fatal(serr)
	}
	return err
}

func addFirewall(t *testing.T, db *store.DB, url string) int64 {
	t.Helper()
	var id int64
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		id, err = tx.InsertDevice(context.Background(), store.Device{Name: "fw", Kind: "firewall", SNMPVersion: "2c", Vendor: "fwvendor",
			APIURL: url, Profile: "auto", PollSeconds: 10, Enabled: true})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestInterval: a REST device is never polled more often than every 60 s.
func TestInterval(t *testing.T) {
	for _, c := range []struct {
		secs int
		want time.Duration
	}{{0, time.Minute}, {10, time.Minute}, {59, time.Minute}, {60, time.Minute}, {300, 5 * time.Minute}} {
		if got := Interval(record.Device{PollSeconds: c.secs}); got != c.want {
			t.Errorf("poll_seconds %d: interval %v, want %v", c.secs, got, c.want)
		}
	}
}

// TestScheduledPollStores: per profile and on both databases, two
// scheduled polls of the fixture device store the device's system
// group, api_profile/version/caps, interface and resource samples and
// the VPN, SD-WAN and policy rows exactly (rates against the session's
// previous poll); the retention loop prunes the new tables and deleting the device removes
// its rows.
func TestScheduledPollStores(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		for _, profile := range []string{"7.0", "7.2", "7.4", "7.6"} {
			t.Run(profile, func(t *testing.T) {
				ctx := context.Background()
				srv := fwtest.Start(fixture(profile), "tok")
				defer srv.Close()
				id := addFirewall(t, db, srv.URL)
				dev := record.Device{ID: id, Vendor: "fwvendor", APIURL: srv.URL, APIToken: "tok", Profile: "auto", PollSeconds: 10, Enabled: true}
				drv := NewDriver(DefaultConfig(), Deps{}, nil)
				t0 := time.Unix(1764000600, 0)
				clock := t0
				drv.now = func() time.Time { return clock }
				s := drv.Open()
				defer s.Close()
				if err := pollSave(t, s, dev, db); err != nil {
					t.Fatal(err)
				}
				clock = t0.Add(time.Minute)
				if err := pollSave(t, s, dev, db); err != nil {
					t.Fatal(err)
				}

				d, err := db.Device(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				wantVersion := map[string]string{"7.0": "v7.0.12", "7.2": "v7.2.8", "7.4": "v7.4.4", "7.6": "v7.6.0"}[profile]
				if d.LastError != "" || d.LastPoll != t0.Unix()+60 || d.SysName != "fw-edge-1" || d.APIProfile != profile ||
					d.APICaps != "status,resources,interfaces,vpn_ipsec,vpn_ssl,sdwan,policies" || (wantVersion != "" && d.APIVersion != wantVersion) {
					t.Errorf("device after polls: %+v", d)
				}
				ifs, err := db.DeviceIfaces(ctx, id, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(ifs) != 2 || ifs[0].Name != "port1" || ifs[0].SpeedBps != 1e9 || ifs[0].InOctets != 987654321 || !ifs[0].OperUp ||
					ifs[0].RxUtilPct == nil || *ifs[0].RxUtilPct != 0 || ifs[1].RxUtilPct != nil || ifs[1].OperUp {
					t.Errorf("interfaces %+v", ifs)
				}
				res, err := db.DeviceResources(ctx, id, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(res) != 2 || *res[1].CPUPct != 7 || *res[1].MemPct != 41 || *res[1].DiskPct != 12 || *res[1].Sessions != 1834 {
					t.Errorf("resources %+v", res)
				}
				vpn, err := db.DeviceVPN(ctx, id, t0.Unix()+60)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := json.Marshal(vpn)
				ts := "1764000660"
				want := `[{"ts":` + ts + `,"kind":"ipsec","vdom":"root","name":"to-branch","remote":"198.51.100.20","status":"down","uptime_sec":0,"in_bytes":0,"out_bytes":0},` +
					`{"ts":` + ts + `,"kind":"ipsec","vdom":"root","name":"to-hq","remote":"203.0.113.10","status":"up","uptime_sec":86400,"in_bytes":5000,"out_bytes":7000},` +
					`{"ts":` + ts + `,"kind":"ssl","vdom":"root","name":"alice","remote":"192.0.2.44","status":"up","uptime_sec":660,"in_bytes":0,"out_bytes":0}]`
				if string(got) != want {
					t.Errorf("vpn:\n got %s\nwant %s", got, want)
				}
				sd, err := db.DeviceSDWAN(ctx, id, 0)
				if err != nil {
					t.Fatal(err)
				}
				got, _ = json.Marshal(sd[2:])
				want = `[{"ts":` + ts + `,"vdom":"root","name":"dns-check","member":"port1","status":"up","latency_ms":12.5,"jitter_ms":0.8,"loss_pct":0},` +
					`{"ts":` + ts + `,"vdom":"root","name":"dns-check","member":"port3","status":"down","latency_ms":0,"jitter_ms":0,"loss_pct":100}]`
				if len(sd) != 4 || string(got) != want {
					t.Errorf("sdwan (%d rows):\n got %s\nwant %s", len(sd), got, want)
				}
				pol, err := db.DevicePolicies(ctx, id, 0)
				if err != nil {
					t.Fatal(err)
				}
				got, _ = json.Marshal(pol)
				want = `[{"vdom":"root","policy_id":1,"hits":0,"bytes":0,"packets":0,"active_sessions":12,"hit_count":450,"last_ts":` + ts + `},` +
					`{"vdom":"root","policy_id":7,"hits":0,"bytes":0,"packets":0,"active_sessions":0,"hit_count":0,"last_ts":` + ts + `}]`
				if string(got) != want {
					t.Errorf("policies:\n got %s\nwant %s", got, want)
				}

				// Retention: keep 1 h; both polls are older.
				ret := store.NewRetention(nil, store.RetentionConfig{Hours: 1, Interval: time.Hour}, db, nil)
				for _, tb := range []string{"device_vpn", "device_sdwan", "device_policies"} {
					if err := ret.Register(tb, "ts"); err != nil {
						t.Fatal(err)
					}
				}
				n, err := ret.RunOnce(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if n["device_vpn"] != 6 || n["device_sdwan"] != 4 || n["device_policies"] != 4 {
					t.Errorf("pruned %v", n)
				}

				clock = time.Now()
				_ = pollSave(t, s, dev, db) // rows again, then the device goes
				if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteDevice(ctx, id) }); err != nil {
					t.Fatal(err)
				}
				v2, _ := db.DeviceVPN(ctx, id, 0)
				s2, _ := db.DeviceSDWAN(ctx, id, 0)
				p2, _ := db.DevicePolicies(ctx, id, 0)
				if len(v2)+len(s2)+len(p2) != 0 {
					t.Errorf("rows left after delete: %d %d %d", len(v2), len(s2), len(p2))
				}
			})
		}
	})
}

// TestPolicyDeltas: hits, bytes and packets grow between the first and
// last sample of the window; a counter reset counts from zero; the most
// hits first. Both databases.
func TestPolicyDeltas(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		id := addFirewall(t, db, "https://192.0.2.1")
		for i, c := range []struct{ a, b uint64 }{{100, 5}, {160, 9}, {20, 50}} {
			ts := int64(1764000000 + 60*i)
			err := db.SaveDevicePoll(ctx, record.DevicePoll{DeviceID: id, TS: ts, Firewall: &record.FirewallPoll{Profile: "7.4", Policies: []record.PolicySample{
				{TS: ts, VDOM: "root", PolicyID: 1, HitCount: c.a, Bytes: c.a * 10, Packets: c.a * 2, ActiveSessions: uint64(i)},
				{TS: ts, VDOM: "root", PolicyID: 2, HitCount: c.b, Bytes: c.b, Packets: c.b},
			}}})
			if err != nil {
				t.Fatal(err)
			}
		}
		pol, err := db.DevicePolicies(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(pol)
		// policy 1: 100 -> 160 (+60) -> 20 (reset: +20) = 80; policy 2: +4 +41 = 45
		want := `[{"vdom":"root","policy_id":1,"hits":80,"bytes":800,"packets":160,"active_sessions":2,"hit_count":20,"last_ts":1764000120},` +
			`{"vdom":"root","policy_id":2,"hits":45,"bytes":45,"packets":45,"active_sessions":0,"hit_count":50,"last_ts":1764000120}]`
		if string(got) != want {
			t.Errorf("policies:\n got %s\nwant %s", got, want)
		}
		pol, _ = db.DevicePolicies(ctx, id, 1764000060)
		if len(pol) != 2 || pol[0].PolicyID != 2 || pol[0].Hits != 41 || pol[1].Hits != 20 {
			t.Errorf("window from the second poll: %+v", pol)
		}
	})
}

// TestPollFailureSaysWhy: a refused token is the device's last_error,
// each poll asks the status endpoint once and stops there. (The backoff
// is the device component's: collectors/devices.)
func TestPollFailureSaysWhy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		srv := fwtest.Start(fixture("7.4"), "right")
		defer srv.Close()
		id := addFirewall(t, db, srv.URL)
		dev := record.Device{ID: id, Vendor: "fwvendor", APIURL: srv.URL, APIToken: "wrong", Profile: "auto", PollSeconds: 120, Enabled: true}
		drv := NewDriver(DefaultConfig(), Deps{}, nil)
		t0 := time.Unix(1764000600, 0)
		drv.now = func() time.Time { return t0 }
		s := drv.Open()
		defer s.Close()
		for range 2 {
			if err := pollSave(t, s, dev, db); err == nil {
				t.Fatal("a refused token polled")
			}
		}
		d, _ := db.Device(ctx, id)
		if d.LastError != "/api/v2/monitor/system/status: 401: the API token was refused" || d.LastPoll != t0.Unix() {
			t.Errorf("last_error %q last_poll %d", d.LastError, d.LastPoll)
		}
		if times, _ := srv.Requests(); len(times) != 2 {
			t.Errorf("%d requests; want 2 (the status endpoint, once per poll)", len(times))
		}
	})
}
