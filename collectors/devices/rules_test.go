package devices

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/alerting/rules"
	"netmon/collectors/snmp/snmptest"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/vault"
)

// TestRulesInputs: the alert engine's inputs come from each device's
// latest successful poll: interface rates (bits per second) of SNMP
// devices polled within three intervals, firewall states of REST devices
// polled within two; older polls and failed ones are left out.
func TestRulesInputs(t *testing.T) {
	util := 50.0
	snmpPoll := record.DevicePoll{Ifaces: []record.IfaceSample{
		{Name: "ge-0/0/1", SpeedBps: 1e9, RxBps: 1000, TxBps: 2000, RxUtilPct: &util, TxUtilPct: &util, OperUp: true},
		{Name: "no-speed", RxBps: 5},
	}}
	sessions := int64(1834)
	fwPoll := record.DevicePoll{Ifaces: snmpPoll.Ifaces, Resources: &record.ResourceSample{Sessions: &sessions}, Firewall: &record.FirewallPoll{
		VPN: []record.VPNSample{{Kind: "ipsec", VDOM: "root", Name: "to-hq", Status: "up"}, {Kind: "ipsec", VDOM: "root", Name: "to-branch", Status: "down"},
			{Kind: "ssl", Name: "alice", Status: "up"}},
		SDWAN: []record.SDWANSample{{VDOM: "root", Name: "dns", Member: "port1", Status: "up", LatencyMS: 12.5, JitterMS: 0.8}},
	}}
	failing := false
	snmpDrv := &fakeDriver{name: "snmp", poll: func(record.Device) (record.DevicePoll, error) {
		if failing {
			return record.DevicePoll{Err: "down"}, errDown
		}
		return snmpPoll, nil
	}}
	fwDrv := &fakeDriver{name: "fwrest", limits: Limits{MinInterval: time.Minute}, poll: func(record.Device) (record.DevicePoll, error) { return fwPoll, nil }}
	ms := &memStore{devs: []store.Device{
		{ID: 1, Name: "core", Site: "a", Vendor: "snmp", PollSeconds: 60, Enabled: true},
		{ID: 2, Name: "fw", Site: "b", Vendor: "fwrest", PollSeconds: 60, Enabled: true},
	}}
	c, clock := newTest(t, DefaultConfig(), ms, nil, snmpDrv, fwDrv)
	ctx := context.Background()
	c.PollDevice(ctx, 1)
	c.PollDevice(ctx, 2)
	rates, _ := c.IfaceRates(ctx)
	wantRates := []rules.IfaceRate{{Site: "a", Name: "core (device 1) ge-0/0/1", SpeedBps: 1e9, InBps: 8000, OutBps: 16000}}
	if diff := cmp.Diff(rates, wantRates); diff != "" {
		t.Errorf("iface rates (-got, +want):\n%s", diff)
	}
	states, _ := c.FirewallStates(ctx)
	wantStates := []rules.FirewallState{{DeviceID: 2, Name: "fw", Site: "b", Sessions: &sessions,
		Tunnels: []rules.TunnelState{{VDOM: "root", Name: "to-hq", Up: true}, {VDOM: "root", Name: "to-branch"}},
		Health:  []rules.HealthState{{VDOM: "root", Name: "dns", Member: "port1", Up: true, LatencyMS: 12.5, JitterMS: 0.8}}}}
	if diff := cmp.Diff(states, wantStates); diff != "" {
		t.Errorf("firewall states (-got, +want):\n%s", diff)
	}
	// A failed poll keeps the last good one; age decides.
	failing = true
	c.PollDevice(ctx, 1)
	*clock = clock.Add(2*time.Minute + time.Second) // fw: over 2 intervals; snmp: within 3
	if rates, _ := c.IfaceRates(ctx); len(rates) != 1 {
		t.Errorf("rates within 3 intervals: %+v", rates)
	}
	if states, _ := c.FirewallStates(ctx); len(states) != 0 {
		t.Errorf("a state older than 2 intervals: %+v", states)
	}
	*clock = clock.Add(time.Minute)
	if rates, _ := c.IfaceRates(ctx); len(rates) != 0 {
		t.Errorf("rates older than 3 intervals: %+v", rates)
	}
}

// TestScheduledRealSnmpd: the running component polls a real snmpd on
// its schedule through the SNMP driver; when the agent stops the device
// gets last_error and waits its interval doubled per failure; the
// interface rates of its last good poll feed the iface_util rule (lo:
// 10 Mbit/s, up).
func TestScheduledRealSnmpd(t *testing.T) {
	agent := snmptest.Start(t, "sysName back")
	v, err := vault.New(vault.Key{7})
	if err != nil {
		t.Fatal(err)
	}
	blob, err := v.Seal([]byte(`{"community":"`+snmptest.Community+`"}`), AD(7))
	if err != nil {
		t.Fatal(err)
	}
	ms := &memStore{devs: []store.Device{{ID: 7, Name: "sw", Host: agent.Addr, SNMPVersion: "2c", PollSeconds: 1, Enabled: true, Secrets: blob}}}
	cfg := DefaultConfig()
	cfg.Refresh = time.Hour
	cfg.SNMP.Timeout, cfg.SNMP.Retries, cfg.SNMP.DeviceTimeout = 300*time.Millisecond, 0, 5*time.Second
	c := New(nil, cfg, Deps{Store: ms, Vault: v})
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	waitFor(t, 5*time.Second, func() bool { return len(ms.pollsOf(7)) >= 2 })
	var lo []rules.IfaceRate
	rates, _ := c.IfaceRates(context.Background())
	for _, r := range rates {
		if r.Name == "sw (device 7) lo" {
			lo = append(lo, r)
		}
	}
	if len(lo) != 1 || lo[0].SpeedBps != 10_000_000 || lo[0].InBps < 0 {
		t.Errorf("iface rates of lo: %+v", lo)
	}
	polls := ms.pollsOf(7)
	if polls[0].Err != "" || polls[1].Err != "" || polls[1].SysName != "back" {
		t.Fatalf("first polls: %+v", polls[:2])
	}
	agent.Stop()
	waitFor(t, 10*time.Second, func() bool {
		st, _ := c.DeviceState(7)
		return st.Failures >= 2
	})
	polls = ms.pollsOf(7)
	last := polls[len(polls)-1]
	if last.Err != "unreachable: nothing answers SNMP at "+agent.Addr+" (ICMP port unreachable)" || len(last.Ifaces) != 0 {
		t.Errorf("last poll = err %q with %d interfaces; want unreachable and no samples", last.Err, len(last.Ifaces))
	}
	st, _ := c.DeviceState(7)
	// Two failures: the next try is 2 intervals (2 s) after the second.
	if wait := time.Until(st.Next); wait < 1500*time.Millisecond || wait > 2100*time.Millisecond {
		t.Errorf("after 2 failures the next poll is in %v; want about 2 s", wait)
	}
}

func waitFor(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
