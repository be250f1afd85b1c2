package snmp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"netmon/collectors/snmp/snmptest"
	"netmon/store/record"
)

// simData copies the recorded fixtures of testdata/snmp into a data
// directory snmpsim may read.
func simData(t testing.TB, files ...string) string {
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "snmp", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestNeighborsFromSnmpsim: the LLDP, CDP and ARP rows of the recorded
// access switch, served by snmpsim, come out as neighbours.
func TestNeighborsFromSnmpsim(t *testing.T) {
	sim := snmptest.StartSim(t, simData(t, "access-sw1.snmprec", "core-sw1.snmprec"))
	p := New(testConfig(), Deps{})
	r, err := p.pollRaw(context.Background(), record.Device{Host: sim.Addr, SNMPVersion: "2c", Community: "access-sw1"}, true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.poll.SysName != "access-sw1" || len(r.ifaces) != 4 {
		t.Fatalf("sysName %q, %d interfaces", r.poll.SysName, len(r.ifaces))
	}
	var got []string
	for _, n := range r.poll.Neighbors {
		got = append(got, fmt.Sprintf("%s %s -> %s %s %s %s", n.Source, n.LocalPort, n.RemoteName, n.RemotePort, n.RemoteAddr, n.RemoteMAC))
	}
	slices.Sort(got)
	want := []string{
		"arp eth0 ->   10.0.0.50 02:aa:bb:cc:dd:50",
		"arp eth0 ->   10.0.0.99 02:aa:bb:cc:dd:99",
		"cdp eth0 -> dist-sw2 GigabitEthernet1/0/1 10.0.0.2 ",
		"lldp eth0 -> core-sw1 Gi1/0/24 10.0.0.1 ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("neighbours:\n got %q\nwant %q", got, want)
	}
}
