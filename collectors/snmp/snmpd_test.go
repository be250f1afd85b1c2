package snmp

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"netmon/collectors/snmp/snmptest"
	"netmon/store/record"
)

const hostileDescr = "<img src=x onerror=alert(1)> \u202eevil"

func testConfig() Config {
	c := DefaultConfig()
	c.Timeout, c.Retries, c.DeviceTimeout = 300*time.Millisecond, 0, 5*time.Second
	return c
}

// localIfaces are this network namespace's interfaces: what snmpd's
// IF-MIB lists.
func localIfaces(t *testing.T) []string {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range ifs {
		names = append(names, i.Name)
	}
	slices.Sort(names)
	return names
}

func TestPollRealSnmpd(t *testing.T) {
	agent := snmptest.Start(t, "sysName nm-test-sw1", "sysDescr "+hostileDescr)
	want := localIfaces(t)
	devs := map[string]record.Device{
		"v2c":              {ID: 1, Host: agent.Addr, SNMPVersion: "2c", Community: snmptest.Community},
		"v3 SHA/AES":       {ID: 2, Host: agent.Addr, SNMPVersion: "3", V3User: "u1", V3AuthProto: "SHA", V3AuthPass: snmptest.AuthPass, V3PrivProto: "AES", V3PrivPass: snmptest.PrivPass},
		"v3 SHA256/AES256": {ID: 3, Host: agent.Addr, SNMPVersion: "3", V3User: "u2", V3AuthProto: "SHA256", V3AuthPass: snmptest.AuthPass, V3PrivProto: "AES256", V3PrivPass: snmptest.PrivPass},
	}
	p := New(testConfig(), Deps{})
	for name, d := range devs {
		t.Run(name, func(t *testing.T) {
			r, err := p.pollRaw(context.Background(), d, true, nil, nil)
			if err != nil {
				t.Fatalf("poll: %v", err)
			}
			if r.poll.SysName != "nm-test-sw1" || r.poll.SysDescr != hostileDescr {
				t.Errorf("system = %q, %q; want nm-test-sw1 and the hostile text byte for byte", r.poll.SysName, r.poll.SysDescr)
			}
			if r.poll.UptimeCS == 0 {
				t.Error("sysUpTime = 0")
			}
			var got []string
			for _, f := range r.ifaces {
				got = append(got, f.sample.Name)
				if !f.hc {
					t.Errorf("%s: no 64-bit counters (ifXTable)", f.sample.Name)
				}
				if f.sample.Name == "lo" && (f.sample.Class != "loopback" || !f.sample.OperUp || f.sample.InOctets == 0) {
					t.Errorf("lo = %+v; want class loopback, oper up, traffic counted", f.sample)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("interfaces = %v, want %v", got, want)
			}
			res := r.poll.Resources
			if res == nil || res.MemPct == nil || *res.MemPct <= 0 || *res.MemPct > 100 {
				t.Fatalf("resources = %+v; want memory percent", res)
			}
			if !r.cpu.ok {
				t.Errorf("UCD CPU ticks = %+v; want them (the percent needs two polls)", r.cpu)
			}
			if res.DiskPct == nil || *res.DiskPct <= 0 || *res.DiskPct > 100 {
				t.Errorf("disk = %v; want a percent of the fixed disks", res.DiskPct)
			}
		})
	}
}

func TestPollErrorsSayWhy(t *testing.T) {
	agent := snmptest.Start(t)
	// A socket that takes requests and never answers: a real timeout.
	silent, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	p := New(testConfig(), Deps{})
	cases := []struct {
		name string
		dev  record.Device
		want string
	}{
		{"wrong auth password", record.Device{Host: agent.Addr, SNMPVersion: "3", V3User: "u1", V3AuthProto: "SHA", V3AuthPass: "wrongpass1", V3PrivProto: "AES", V3PrivPass: snmptest.PrivPass},
			"authentication failure (wrong auth password or protocol)"},
		{"unknown user", record.Device{Host: agent.Addr, SNMPVersion: "3", V3User: "nobody", V3AuthProto: "SHA", V3AuthPass: snmptest.AuthPass, V3PrivProto: "AES", V3PrivPass: snmptest.PrivPass},
			"unknown user"},
		{"wrong community", record.Device{Host: agent.Addr, SNMPVersion: "2c", Community: "wrong"},
			"timeout: no answer from " + agent.Addr + " within 300ms (1 tries); for v2c check the community"},
		{"silent host", record.Device{Host: silent.LocalAddr().String(), SNMPVersion: "3", V3User: "u1", V3AuthProto: "SHA", V3AuthPass: snmptest.AuthPass},
			"timeout: no answer from " + silent.LocalAddr().String() + " within 300ms (1 tries); for v2c check the community"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := p.Probe(context.Background(), c.dev)
			if got.OK || got.Error != c.want {
				t.Errorf("probe = ok %v, error %q; want %q", got.OK, got.Error, c.want)
			}
		})
	}
}

// TestCPUFromTicks: two polls 6 s apart (net-snmp samples its CPU ticks
// every 5 s) give a CPU percent from UCD's tick counters.
func TestCPUFromTicks(t *testing.T) {
	if testing.Short() {
		t.Skip("6 s")
	}
	agent := snmptest.Start(t)
	p := New(testConfig(), Deps{})
	d := record.Device{ID: 1, Host: agent.Addr, SNMPVersion: "2c", Community: "public"}
	_, prev, err := p.poll(context.Background(), d, nil, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second)
	got, _, err := p.poll(context.Background(), d, prev, false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Resources == nil || got.Resources.CPUPct == nil || *got.Resources.CPUPct < 0 || *got.Resources.CPUPct > 100 {
		t.Fatalf("resources = %+v; want a CPU percent", got.Resources)
	}
}

// TestMovingColumnsOnly: between whole walks a poll reads only the
// moving columns over the cached rows: same interfaces and names, fewer
// values; a reboot (sysUpTime back) walks everything again.
func TestMovingColumnsOnly(t *testing.T) {
	agent := snmptest.Start(t)
	p := New(testConfig(), Deps{})
	d := record.Device{ID: 1, Host: agent.Addr, SNMPVersion: "2c", Community: "public"}
	var cache ifCache
	first, err := p.pollRaw(context.Background(), d, false, &cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	second, err := p.pollRaw(context.Background(), d, false, &cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cache.age != 1 || !cache.hc || len(second.ifaces) != len(first.ifaces) {
		t.Fatalf("cache age %d hc %v; %d then %d interfaces", cache.age, cache.hc, len(first.ifaces), len(second.ifaces))
	}
	for i := range first.ifaces {
		a, b := first.ifaces[i].sample, second.ifaces[i].sample
		if a.Name != b.Name || a.Class != b.Class || a.SpeedBps != b.SpeedBps || b.InOctets < a.InOctets {
			t.Errorf("interface %d: %+v then %+v", i, a, b)
		}
	}
	ifVals := func(r pollResult) int { return r.varbinds }
	if ifVals(second) >= ifVals(first) {
		t.Errorf("the second poll read %d values, the first %d: want fewer", ifVals(second), ifVals(first))
	}
	cache.uptime = 1 << 31 // as if the device had been up longer: a reboot
	third, err := p.pollRaw(context.Background(), d, false, &cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cache.age != 0 || third.varbinds != first.varbinds {
		t.Errorf("after a reboot: age %d, %d values (first poll %d)", cache.age, third.varbinds, first.varbinds)
	}
}
