package snmp

import (
	"testing"

	"github.com/gosnmp/gosnmp"

	"netmon/store/record"
)

func TestApplyRates(t *testing.T) {
	const gig = 1_000_000_000
	iface := func(in, out uint64, hc bool, speed uint64, up bool) []rawIface {
		return []rawIface{{sample: record.IfaceSample{IfIndex: 1, InOctets: in, OutOctets: out, SpeedBps: speed, OperUp: up}, hc: hc}}
	}
	prevOf := func(in, out uint64, hc bool, uptime uint32) *prevPoll {
		return &prevPoll{at: 1000, uptime: uptime, ifaces: map[int]prevIface{1: {in: in, out: out, hc: hc}}}
	}
	cases := []struct {
		name           string
		prev           *prevPoll
		uptime         uint32
		cur            []rawIface
		rx, tx         float64
		rxUtil, txUtil float64 // -1: none
	}{
		{"first poll: no rate", nil, 6000, iface(1000, 1000, true, gig, true), 0, 0, -1, -1},
		{"64-bit steady", prevOf(0, 0, true, 1000), 7000, iface(60_000_000, 6_000_000, true, gig, true), 1_000_000, 100_000, 0.8, 0.08},
		{"oper down: rate, no utilisation", prevOf(0, 0, true, 1000), 7000, iface(60_000, 60_000, true, gig, false), 1000, 1000, -1, -1},
		{"no trusted speed: rate, no utilisation", prevOf(0, 0, true, 1000), 7000, iface(60_000, 60_000, true, 0, true), 1000, 1000, -1, -1},
		{"32-bit wrap unwrapped", prevOf(1<<32-30_000, 100, false, 1000), 7000, iface(30_000, 100, false, gig, true), 1000, 0, 0.0008, 0},
		{"64-bit regression: reset, no spike", prevOf(1<<40, 1<<40, true, 1000), 7000, iface(5, 5, true, gig, true), 0, 0, -1, -1},
		{"reboot (sysUpTime back): no rate even if counters grew", prevOf(100, 100, true, 900_000), 500, iface(60_000_100, 100, true, gig, true), 0, 0, -1, -1},
		{"sysUpTime wrap is not a reboot", prevOf(0, 0, true, 1<<32-1000), 5000, iface(60_000, 0, true, gig, true), 1000, 0, 0.0008, 0},
		{"over the speed: refused", prevOf(0, 0, false, 1000), 7000, iface(60*2_000_000, 0, false, 10_000_000, true), 0, 0, -1, -1},
		{"32-bit wrap that would exceed the speed: refused", prevOf(1<<32-1, 0, false, 1000), 7000, iface(1<<31, 0, false, 100_000_000, true), 0, 0, -1, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			applyRates(c.prev, 1060, c.uptime, c.cur)
			s := c.cur[0].sample
			if s.RxBps != c.rx || s.TxBps != c.tx {
				t.Errorf("rates = %v, %v; want %v, %v", s.RxBps, s.TxBps, c.rx, c.tx)
			}
			checkUtil(t, "rx", s.RxUtilPct, c.rxUtil)
			checkUtil(t, "tx", s.TxUtilPct, c.txUtil)
		})
	}
}

func checkUtil(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	switch {
	case want < 0 && got != nil:
		t.Errorf("%s util = %v; want none", what, *got)
	case want >= 0 && got == nil:
		t.Errorf("%s util = none; want %v", what, want)
	case want >= 0 && (*got-want > 1e-9 || want-*got > 1e-9):
		t.Errorf("%s util = %v; want %v", what, *got, want)
	}
}

func TestClass(t *testing.T) {
	cases := []struct {
		ifType int
		name   string
		want   string
	}{
		{6, "eth0", "ethernet"}, {117, "Gi1/0/1", "ethernet"}, {71, "wlan0", "wifi"}, {24, "lo", "loopback"},
		{131, "gre1", "tunnel"}, {131, "ipsec0", "vpn"}, {53, "wg0", "vpn"}, {209, "br0", "bridge"},
		{135, "Vlan10", "vlan"}, {53, "eth0.10", "vlan"}, {23, "ppp0", "ppp"}, {1, "x", "unknown"}, {0, "", "unknown"},
	}
	for _, c := range cases {
		if got := Class(c.ifType, c.name); got != c.want {
			t.Errorf("Class(%d, %q) = %q, want %q", c.ifType, c.name, got, c.want)
		}
	}
}

func TestOIDLessEq(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{".1.3.6.1.2", ".1.3.6.1.10", true}, {".1.3.6.1.10", ".1.3.6.1.2", false}, {".1.3.6", ".1.3.6", true},
		{".1.3.6.1", ".1.3.6", false}, {".1.3.6", ".1.3.6.1", true},
	}
	for _, c := range cases {
		if got := oidLessEq(c.a, c.b); got != c.want {
			t.Errorf("oidLessEq(%s, %s) = %v", c.a, c.b, got)
		}
	}
}

// FuzzBuildIfaces: interface rows as an agent may send them (any index
// suffix, any value type) never panic and keep one row per numeric
// index.
func FuzzBuildIfaces(f *testing.F) {
	f.Add("1", "eth0", uint64(6), uint64(1000))
	f.Add("4294967296", "\xff\xfe<img>", uint64(1<<63), uint64(0))
	f.Add("1.2", "", uint64(0), uint64(1))
	f.Fuzz(func(t *testing.T, idx, name string, ifType, octets uint64) {
		cols := []*column{
			{oid: oidIfEntry + "2", rows: map[string]gosnmp.SnmpPDU{idx: {Type: gosnmp.OctetString, Value: []byte(name)}}},
			{oid: oidIfEntry + "3", rows: map[string]gosnmp.SnmpPDU{idx: {Type: gosnmp.Integer, Value: int(ifType % 300)}}},
			{oid: oidIfXEntry + "6", rows: map[string]gosnmp.SnmpPDU{idx: {Type: gosnmp.Counter64, Value: octets}}},
			{oid: oidIfEntry + "10", rows: map[string]gosnmp.SnmpPDU{idx: {Type: gosnmp.OctetString, Value: []byte("not a number")}}},
		}
		out := buildIfaces(cols)
		if len(out) > 1 {
			t.Fatalf("%d rows from one index", len(out))
		}
		if len(out) == 1 && out[0].sample.InOctets != octets {
			t.Fatalf("in octets %d, want %d", out[0].sample.InOctets, octets)
		}
	})
}

// TestPortName: an LLDP port is named by its id when that is a name, by
// its description when the id is a MAC address (lldpd's default) or
// binary, and by the MAC when there is no description.
func TestPortName(t *testing.T) {
	macID := []byte{0x02, 0x42, 0xac, 0x11, 0x00, 0x02}
	pdu := func(v any) gosnmp.SnmpPDU {
		switch x := v.(type) {
		case int:
			return gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: x}
		case []byte:
			return gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: x}
		}
		return gosnmp.SnmpPDU{}
	}
	for _, c := range []struct {
		sub  gosnmp.SnmpPDU
		id   []byte
		desc string
		want string
	}{
		{pdu(5), []byte("Gi1/0/24"), "uplink to core", "Gi1/0/24"},
		{gosnmp.SnmpPDU{}, []byte("eth0"), "", "eth0"},
		{pdu(3), macID, "veth-b", "veth-b"},
		{pdu(3), macID, "", "02:42:ac:11:00:02"},
		{pdu(7), []byte{0x01, 0xff}, "port 1", "port 1"},
		{pdu(3), []byte("abc"), "", "abc"},
	} {
		var desc gosnmp.SnmpPDU
		if c.desc != "" {
			desc = pdu([]byte(c.desc))
		}
		if got := portName(c.sub, pdu(c.id), desc); got != c.want {
			t.Errorf("portName(%v, %q, %q) = %q, want %q", c.sub.Value, c.id, c.desc, got, c.want)
		}
	}
}

// FuzzPortName: any LLDP port id, subtype and description give a name
// without panicking; a printable id of a name subtype is kept as is.
func FuzzPortName(f *testing.F) {
	f.Add(5, []byte("Gi1/0/24"), []byte("uplink"))
	f.Add(3, []byte{2, 0x42, 0xac, 0x11, 0, 2}, []byte(""))
	f.Fuzz(func(t *testing.T, sub int, id, desc []byte) {
		got := portName(gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: sub}, gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: id},
			gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: desc})
		if sub != 3 && printable(id) && got != string(id) {
			t.Fatalf("portName(%d, %q) = %q", sub, id, got)
		}
	})
}
