package attr

import (
	"reflect"
	"testing"
	"time"
)

// A laptop's adapters as Npcap and GetIfTable2Ex would list them: wired
// and Wi-Fi (physical: HardwareInterface and ConnectorPresent), Hyper-V's
// vEthernet (busy, virtual), a WireGuard tunnel, Npcap's loopback
// adapter (no row) and a WAN Miniport without a row.
const (
	guidEth  = "{4D36E972-E325-11CE-BFC1-08002BE10318}"
	guidWiFi = "{7A3E2F10-0C1B-4E52-9E0B-2D5C1A0F6B21}"
	guidVEth = "{C08CB7B8-9B3C-408E-8E30-5E16A3AEB444}"
	guidWG   = "{1B4C5D6E-7F80-4912-A3B4-C5D6E7F80912}"
)

func laptopDevs() []npcapDevice {
	return []npcapDevice{
		// Npcap writes the GUID upper-case; lower-case must match too.
		{name: `\Device\NPF_{4d36e972-e325-11ce-bfc1-08002be10318}`, flags: pcapIfUp | pcapIfRunning},
		{name: `\Device\NPF_` + guidWiFi},
		{name: `\Device\NPF_` + guidVEth},
		{name: `\Device\NPF_` + guidWG},
		{name: `\Device\NPF_Loopback`, flags: pcapIfLoopback | pcapIfUp | pcapIfRunning},
		{name: `\Device\NPF_{00000000-0000-0000-0000-0000000000AA}`},
	}
}

func laptopRows(ethBytes, wifiBytes uint64, wifiUp bool) []winIfRow {
	return []winIfRow{
		{guid: guidEth, alias: "Ethernet", ifType: 6, flags: ifHardwareInterface | ifConnectorPresent, operUp: true, in: ethBytes},
		{guid: guidWiFi, alias: "Wi-Fi", ifType: 71, flags: ifHardwareInterface | ifConnectorPresent, operUp: wifiUp, out: wifiBytes},
		{guid: guidVEth, alias: "vEthernet (Default Switch)", ifType: 6, operUp: true, in: 1 << 40},
		// HardwareInterface without ConnectorPresent is not physical.
		{guid: guidWG, alias: "wg0", ifType: 53, flags: ifHardwareInterface, operUp: true, in: 1 << 41},
		{guid: "{11111111-2222-3333-4444-555555555555}", alias: "Loopback Pseudo-Interface 1", ifType: ifTypeSoftwareLoopback, operUp: true},
	}
}

func TestNpcapIfaces(t *testing.T) {
	got := npcapIfaces(laptopDevs(), laptopRows(1000, 500, false))
	want := []npcapIface{
		{stat: ifaceStat{Name: `\Device\NPF_{4d36e972-e325-11ce-bfc1-08002be10318}`, Up: true, Bytes: 1000}, alias: "Ethernet"},
		{stat: ifaceStat{Name: `\Device\NPF_` + guidWiFi, Bytes: 500}, alias: "Wi-Fi"},
		{stat: ifaceStat{Name: `\Device\NPF_` + guidVEth, Up: true, Bytes: 1 << 40}, alias: "vEthernet (Default Switch)", virtual: true},
		{stat: ifaceStat{Name: `\Device\NPF_` + guidWG, Up: true, Bytes: 1 << 41}, alias: "wg0", virtual: true},
		{stat: ifaceStat{Name: `\Device\NPF_Loopback`, Up: true, Loopback: true}, virtual: true},
		{stat: ifaceStat{Name: `\Device\NPF_{00000000-0000-0000-0000-0000000000AA}`}, virtual: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if it, ok := npcapResolve(got, "ETHERNET"); !ok || it.display() != "Ethernet" || it.stat.Name != want[0].stat.Name {
		t.Fatalf("by alias: %+v %v", it, ok)
	}
	if it, ok := npcapResolve(got, `\Device\NPF_Loopback`); !ok || it.display() != `\Device\NPF_Loopback` {
		t.Fatalf("by device name: %+v %v", it, ok)
	}
	if _, ok := npcapResolve(got, "Ethernet 2"); ok {
		t.Fatal("resolved an unknown name")
	}
}

// chooseInterface over Npcap's adapters: the one physical adapter that is
// up, whatever the virtual ones carry; with two, the busiest in the
// window.
func TestChooseNpcapInterface(t *testing.T) {
	for _, tc := range []struct {
		desc          string
		before, after []npcapIface
		want          string
	}{
		{"wired up, Wi-Fi down: wired over the busier vEthernet", npcapIfaces(laptopDevs(), laptopRows(1000, 500, false)), nil, "Ethernet"},
		{"both up: the busier in the window",
			npcapIfaces(laptopDevs(), laptopRows(1<<30, 10, true)),
			npcapIfaces(laptopDevs(), laptopRows(1<<30+5, 9000, true)), "Wi-Fi"},
		{"no interface table: every adapter virtual, up by Npcap's flags, before loopback", npcapIfaces(laptopDevs(), nil), nil,
			`\Device\NPF_{4d36e972-e325-11ce-bfc1-08002be10318}`},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			cur := tc.before
			list := func() ([]ifaceStat, error) {
				out := make([]ifaceStat, len(cur))
				for i, it := range cur {
					out[i] = it.stat
				}
				return out, nil
			}
			virtual := func(name string) bool { it, ok := npcapResolve(cur, name); return !ok || it.virtual }
			name, err := chooseInterface(list, virtual, time.Second, func(time.Duration) {
				if tc.after == nil {
					t.Fatal("sampled with one candidate")
				}
				cur = tc.after
			})
			it, _ := npcapResolve(cur, name)
			if err != nil || it.display() != tc.want {
				t.Fatalf("got %q (%q), %v; want %q", name, it.display(), err, tc.want)
			}
		})
	}
}
