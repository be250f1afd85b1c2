package attr

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"netmon/agentmode/wire"
)

// The fixtures below are the bytes GetExtendedTcpTable and
// GetExtendedUdpTable write, built field by field at the offsets of
// Microsoft's documented structures (tcpmib.h, udpmib.h; every member a
// DWORD or a UCHAR array, so no padding): no Windows host runs the tests.

// winTCP4Literal is one MIB_TCPTABLE_OWNER_PID written out byte by byte:
// one ESTABLISHED row 10.0.0.5:50123 -> 93.184.216.34:443 of PID 4242,
// whose port DWORDs carry garbage in their upper 16 bits (documented as
// possible), then 8 bytes of buffer slack after the table.
var winTCP4Literal = []byte{
	0x01, 0x00, 0x00, 0x00, // dwNumEntries = 1
	0x05, 0x00, 0x00, 0x00, // dwState = MIB_TCP_STATE_ESTAB (5)
	10, 0, 0, 5, // dwLocalAddr (network order)
	0xc3, 0xcb, 0xad, 0xde, // dwLocalPort: 50123 = 0xc3cb in network order, garbage above
	93, 184, 216, 34, // dwRemoteAddr
	0x01, 0xbb, 0xef, 0xbe, // dwRemotePort: 443 = 0x01bb, garbage above
	0x92, 0x10, 0x00, 0x00, // dwOwningPid = 4242 (0x1092)
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // slack
}

// winRow is one row of a fixture table: the fields a row may have.
type winRow struct {
	state                   uint32
	local, remote           netip.AddrPort
	localScope, remoteScope uint32
	pid                     uint32
}

// winFixture builds a table of kind t: the row count, then each row with
// its fields at the documented offsets.
func winFixture(t winTable, rows ...winRow) []byte {
	le := binary.LittleEndian.PutUint32
	size := map[winTable]int{winTCP4: 24, winTCP6: 56, winUDP4: 12, winUDP6: 28}[t]
	b := make([]byte, 4+len(rows)*size)
	le(b, uint32(len(rows)))
	port := func(dst []byte, p uint16) { binary.BigEndian.PutUint16(dst, p) } // low 16 bits, network order
	v4 := func(dst []byte, a netip.Addr) { x := a.As4(); copy(dst, x[:]) }
	v6 := func(dst []byte, a netip.Addr) { x := a.As16(); copy(dst, x[:]) }
	for i, r := range rows {
		o := b[4+i*size:]
		switch t {
		case winTCP4: // dwState 0, dwLocalAddr 4, dwLocalPort 8, dwRemoteAddr 12, dwRemotePort 16, dwOwningPid 20
			le(o[0:], r.state)
			v4(o[4:], r.local.Addr())
			port(o[8:], r.local.Port())
			v4(o[12:], r.remote.Addr())
			port(o[16:], r.remote.Port())
			le(o[20:], r.pid)
		case winTCP6: // ucLocalAddr 0, dwLocalScopeId 16, dwLocalPort 20, ucRemoteAddr 24, dwRemoteScopeId 40, dwRemotePort 44, dwState 48, dwOwningPid 52
			v6(o[0:], r.local.Addr())
			le(o[16:], r.localScope)
			port(o[20:], r.local.Port())
			v6(o[24:], r.remote.Addr())
			le(o[40:], r.remoteScope)
			port(o[44:], r.remote.Port())
			le(o[48:], r.state)
			le(o[52:], r.pid)
		case winUDP4: // dwLocalAddr 0, dwLocalPort 4, dwOwningPid 8
			v4(o[0:], r.local.Addr())
			port(o[4:], r.local.Port())
			le(o[8:], r.pid)
		case winUDP6: // ucLocalAddr 0, dwLocalScopeId 16, dwLocalPort 20, dwOwningPid 24
			v6(o[0:], r.local.Addr())
			le(o[16:], r.localScope)
			port(o[20:], r.local.Port())
			le(o[24:], r.pid)
		}
	}
	return b
}

var ap = netip.MustParseAddrPort

// The MIB_TCP_STATE values of the fixtures besides LISTEN and TIME_WAIT.
const winTCPEstablished = 5

// winFixtures are a host's four tables: a browser's connection, RPC and
// SMB listeners (SMB is System's, PID 4), a connection in TIME_WAIT on
// the RPC port (PID 0), a DNS server, mDNS of a process that has exited,
// an IPv6 link-local connection and DHCPv6 client with scope ids, and a
// dual-stack socket's IPv4-mapped connection.
func winFixtures() map[winTable][]byte {
	return map[winTable][]byte{
		winTCP4: winFixture(winTCP4,
			winRow{state: winTCPEstablished, local: ap("10.0.0.5:50123"), remote: ap("93.184.216.34:443"), pid: 4242},
			winRow{state: winTCPListen, local: ap("0.0.0.0:135"), remote: ap("0.0.0.0:0"), pid: 1000},
			winRow{state: winTCPTimeWait, local: ap("10.0.0.5:135"), remote: ap("10.0.0.9:50001"), pid: 0},
			winRow{state: winTCPTimeWait, local: ap("10.0.0.5:50000"), remote: ap("1.2.3.4:80"), pid: 0},
		),
		winTCP6: winFixture(winTCP6,
			winRow{state: winTCPListen, local: ap("[::]:445"), remote: ap("[::]:0"), pid: 4},
			winRow{state: winTCPEstablished, local: ap("[fe80::1]:50200"), localScope: 12, remote: ap("[fe80::2]:443"), remoteScope: 12, pid: 777},
			winRow{state: winTCPEstablished, local: ap("[::ffff:10.0.0.5]:50300"), remote: ap("[::ffff:10.0.0.9]:8080"), pid: 888},
		),
		winUDP4: winFixture(winUDP4,
			winRow{local: ap("0.0.0.0:53"), pid: 2000},
			winRow{local: ap("10.0.0.5:5353"), pid: 3000},
		),
		winUDP6: winFixture(winUDP6,
			winRow{local: ap("[fe80::1]:546"), localScope: 7, pid: 1500},
		),
	}
}

func TestParseWinTable(t *testing.T) {
	fx := winFixtures()
	for _, tc := range []struct {
		desc string
		kind winTable
		b    []byte
		want []sockEntry
	}{
		{"tcp4 literal: ports masked to their low 16 bits, slack ignored", winTCP4, winTCP4Literal, []sockEntry{
			{proto: protoTCP, state: winTCPEstablished, local: ap("10.0.0.5:50123"), remote: ap("93.184.216.34:443"), pid: 4242}}},
		{"tcp4", winTCP4, fx[winTCP4], []sockEntry{
			{proto: protoTCP, state: 5, local: ap("10.0.0.5:50123"), remote: ap("93.184.216.34:443"), pid: 4242},
			{proto: protoTCP, state: 2, local: ap("0.0.0.0:135"), remote: ap("0.0.0.0:0"), pid: 1000},
			{proto: protoTCP, state: 11, local: ap("10.0.0.5:135"), remote: ap("10.0.0.9:50001")},
			{proto: protoTCP, state: 11, local: ap("10.0.0.5:50000"), remote: ap("1.2.3.4:80")}}},
		{"tcp6: scope ids skipped, v4-mapped unmapped", winTCP6, fx[winTCP6], []sockEntry{
			{proto: protoTCP, state: 2, local: ap("[::]:445"), remote: ap("[::]:0"), pid: 4},
			{proto: protoTCP, state: 5, local: ap("[fe80::1]:50200"), remote: ap("[fe80::2]:443"), pid: 777},
			{proto: protoTCP, state: 5, local: ap("10.0.0.5:50300"), remote: ap("10.0.0.9:8080"), pid: 888}}},
		{"udp4", winUDP4, fx[winUDP4], []sockEntry{
			{proto: protoUDP, local: ap("0.0.0.0:53"), pid: 2000},
			{proto: protoUDP, local: ap("10.0.0.5:5353"), pid: 3000}}},
		{"udp6", winUDP6, fx[winUDP6], []sockEntry{
			{proto: protoUDP, local: ap("[fe80::1]:546"), pid: 1500}}},
		{"empty table", winUDP6, []byte{0, 0, 0, 0}, nil},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got, err := parseWinTable(tc.kind, tc.b, nil)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseWinTableShort(t *testing.T) {
	oneRow := winFixture(winTCP6, winRow{local: ap("[::1]:1"), remote: ap("[::1]:2"), pid: 9})
	twoDeclared := append([]byte{2, 0, 0, 0}, oneRow[4:]...)
	for _, tc := range []struct {
		desc string
		kind winTable
		b    []byte
		want winTableError
	}{
		{"nil", winTCP4, nil, winTableError{Table: winTCP4}},
		{"shorter than the count", winUDP4, []byte{1, 0, 0}, winTableError{Table: winUDP4, Len: 3}},
		{"two rows declared, one present", winTCP6, twoDeclared, winTableError{Table: winTCP6, Rows: 2, Len: 60}},
		{"count of 2^32-1", winUDP6, []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}, winTableError{Table: winUDP6, Rows: 1<<32 - 1, Len: 7}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			prev := []sockEntry{{proto: protoUDP, pid: 1}}
			got, err := parseWinTable(tc.kind, tc.b, prev)
			var te *winTableError
			if !errors.As(err, &te) || *te != tc.want || len(got) != 1 {
				t.Fatalf("got %d entries, %v; want %+v", len(got), err, tc.want)
			}
		})
	}
	if got := (&winTableError{Table: winTCP6, Rows: 2, Len: 60}).Error(); got != "MIB_TCP6TABLE_OWNER_PID: 2 rows do not fit in 60 bytes" {
		t.Fatalf("error text %q", got)
	}
}

// winEntries parses winFixtures, as one lookup does.
func winEntries(t testing.TB) []sockEntry {
	var all []sockEntry
	for _, k := range []winTable{winTCP4, winTCP6, winUDP4, winUDP6} {
		var err error
		if all, err = parseWinTable(k, winFixtures()[k], all); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// fakeNames names the fixtures' PIDs; 3000 has exited.
func fakeNames(pid uint32) (string, bool) {
	n, ok := map[uint32]string{4242: "chrome.exe", 1000: "svchost.exe", 777: "firefox.exe", 888: "java.exe", 2000: "dns.exe", 1500: "svchost.exe"}[pid]
	return n, ok
}

func TestWinMatch(t *testing.T) {
	type result struct {
		o  owner
		ok bool
	}
	cases := []struct {
		desc string
		key  flowKey
		want result
	}{
		{"connected socket", flowKey{protoTCP, ap("10.0.0.5:50123"), ap("93.184.216.34:443")}, result{owner{pid: 4242, name: "chrome.exe"}, true}},
		{"connection not in the table yet: its listener", flowKey{protoTCP, ap("10.0.0.5:135"), ap("10.0.0.7:40000")}, result{owner{pid: 1000, name: "svchost.exe"}, true}},
		{"time-wait on a listening port: the listener", flowKey{protoTCP, ap("10.0.0.5:135"), ap("10.0.0.9:50001")}, result{owner{pid: 1000, name: "svchost.exe"}, true}},
		{"time-wait alone: process gone", flowKey{protoTCP, ap("10.0.0.5:50000"), ap("1.2.3.4:80")}, result{owner{reason: wire.ReasonProcessGone}, true}},
		{"System's listener on [::] takes IPv4: kernel", flowKey{protoTCP, ap("10.0.0.5:445"), ap("10.0.0.9:50002")}, result{owner{reason: wire.ReasonKernel}, true}},
		{"link-local IPv6 without zone", flowKey{protoTCP, ap("[fe80::1]:50200"), ap("[fe80::2]:443")}, result{owner{pid: 777, name: "firefox.exe"}, true}},
		{"dual-stack socket's IPv4 connection", flowKey{protoTCP, ap("10.0.0.5:50300"), ap("10.0.0.9:8080")}, result{owner{pid: 888, name: "java.exe"}, true}},
		{"udp bound to all", flowKey{protoUDP, ap("10.0.0.5:53"), ap("10.0.0.9:40000")}, result{owner{pid: 2000, name: "dns.exe"}, true}},
		{"udp of an exited process", flowKey{protoUDP, ap("10.0.0.5:5353"), ap("224.0.0.251:5353")}, result{owner{reason: wire.ReasonProcessGone}, true}},
		{"udp6 link-local", flowKey{protoUDP, ap("[fe80::1]:546"), ap("[ff02::1:2]:547")}, result{owner{pid: 1500, name: "svchost.exe"}, true}},
		{"no socket: retried", flowKey{protoTCP, ap("10.0.0.5:60000"), ap("1.1.1.1:443")}, result{}},
		{"udp port bound on another address only", flowKey{protoUDP, ap("10.0.0.6:5353"), ap("224.0.0.251:5353")}, result{}},
	}
	keys := make([]flowKey, len(cases))
	for i, c := range cases {
		keys[i] = c.key
	}
	match := winMatch(winEntries(t), keys, fakeNames)
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			o, ok := match(c.key)
			if got := (result{o, ok}); got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
	// A key not asked for is not answered, even if its socket exists.
	if _, ok := match(flowKey{protoUDP, ap("10.0.0.5:53"), ap("10.0.0.8:1")}); ok {
		t.Fatal("answered a key not looked up")
	}
}

// winFixtureTable is the Windows sockTable over the fixtures.
type winFixtureTable struct{ entries []sockEntry }

func (w winFixtureTable) lookup(keys []flowKey) (func(flowKey) (owner, bool), error) {
	return winMatch(w.entries, keys, fakeNames), nil
}

// Frames through the flow table, owners from the fixture tables: the
// rows and reasons the Windows pcap backend reports.
func TestWinTableReport(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tab := newTable(DefaultConfig(), wire.ReasonNotLocal)
	tab.setLocal([]netip.Addr{netip.MustParseAddr("10.0.0.5")})
	feed(tab, now,
		frame(t, ip4("10.0.0.5", "93.184.216.34", layers.IPProtocolTCP), tcp(50123, 443, 1, false), make([]byte, 100)),
		frame(t, ip4("93.184.216.34", "10.0.0.5", layers.IPProtocolTCP), tcp(443, 50123, 9, false), make([]byte, 4000)),
		frame(t, ip4("10.0.0.9", "10.0.0.5", layers.IPProtocolTCP), tcp(50002, 445, 1, false), make([]byte, 300)),
		frame(t, ip4("10.0.0.5", "224.0.0.251", layers.IPProtocolUDP), udp(5353, 5353), make([]byte, 50)),
	)
	keys := tab.pendingKeys()
	match, _ := winFixtureTable{winEntries(t)}.lookup(keys)
	tab.resolve(keys, match)
	if n := len(tab.pendingKeys()); n != 0 {
		t.Fatalf("%d flows still pending", n)
	}
	r := tab.report(now)
	want := []wire.ProcessTraffic{
		{Process: "chrome.exe", PID: 4242, BytesIn: 4000, BytesOut: 100, PacketsIn: 1, PacketsOut: 1,
			Remotes: []wire.Remote{{Proto: "tcp", IP: "93.184.216.34", Port: 443, BytesIn: 4000, BytesOut: 100, PacketsIn: 1, PacketsOut: 1}}},
		{Process: wire.UnattributedProcess, BytesIn: 300, BytesOut: 50, PacketsIn: 1, PacketsOut: 1, Reasons: []wire.UnattributedReason{
			{Reason: wire.ReasonKernel, Bytes: 300, Packets: 1}, {Reason: wire.ReasonProcessGone, Bytes: 50, Packets: 1}}},
	}
	if !reflect.DeepEqual(r.Processes, want) {
		t.Fatalf("rows\n got %+v\nwant %+v", r.Processes, want)
	}
}

// Hostile tables: whatever the count and the length, parsing neither
// panics nor returns rows the buffer does not hold.
func FuzzParseWinTable(f *testing.F) {
	for k, b := range winFixtures() {
		f.Add(uint8(k), b)
	}
	f.Add(uint8(winTCP4), winTCP4Literal)
	f.Add(uint8(winUDP6), []byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		k := winTable(kind % 4)
		got, err := parseWinTable(k, b, nil)
		if err != nil {
			if got != nil {
				t.Fatalf("rows with an error: %+v", got)
			}
			return
		}
		n := int(binary.LittleEndian.Uint32(b))
		if len(got) != n || 4+n*k.rowSize() > len(b) {
			t.Fatalf("%d rows from %d bytes declaring %d", len(got), len(b), n)
		}
	})
}
