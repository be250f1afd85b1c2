package attr

import (
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"netmon/agentmode/wire"
)

// The ETW decoding on the fixtures of testdata/etw (constructed from the
// provider's manifest; see its README), then the rows they make.
func TestETWDecodeFixtures(t *testing.T) {
	files, err := filepath.Glob("../../testdata/etw/*.bin")
	if err != nil || len(files) != 6 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	want := map[string]etwNet{
		"10-tcp-send-v4.bin":        {4242, 1448, protoTCP, true, netip.MustParseAddrPort("10.0.0.5:50123"), netip.MustParseAddrPort("93.184.216.34:443")},
		"11-tcp-recv-v4.bin":        {4242, 5000, protoTCP, false, netip.MustParseAddrPort("10.0.0.5:50123"), netip.MustParseAddrPort("93.184.216.34:443")},
		"26-tcp-send-v6.bin":        {777, 517, protoTCP, true, netip.MustParseAddrPort("[2001:db8::5]:50200"), netip.MustParseAddrPort("[2001:db8::1]:443")},
		"42-udp-send-v4.bin":        {1234, 40, protoUDP, true, netip.MustParseAddrPort("10.0.0.5:61000"), netip.MustParseAddrPort("10.0.0.53:53")},
		"59-udp-recv-v6.bin":        {1234, 120, protoUDP, false, netip.MustParseAddrPort("[2001:db8::5]:61001"), netip.MustParseAddrPort("[2001:db8::53]:53")},
		"43-udp-recv-v4-system.bin": {4, 300, protoUDP, false, netip.MustParseAddrPort("10.0.0.5:137"), netip.MustParseAddrPort("10.0.0.9:137")},
	}
	var c etwCounts
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(f)
		id, _ := strconv.Atoi(base[:strings.IndexByte(base, '-')])
		e, err := decodeETWNet(uint16(id), raw)
		if err != nil || e != want[base] {
			t.Errorf("%s: %+v %v, want %+v", base, e, err, want[base])
		}
		// Every shorter prefix of the template is refused, never read
		// past its end.
		for n := range len(raw) - (len(raw) - 8 - 2*addrLen(id) - 4) {
			if _, err := decodeETWNet(uint16(id), raw[:n]); err != errETWShort {
				t.Fatalf("%s cut to %d: %v", base, n, err)
			}
		}
		c.add(e)
		if e.PID == 4242 { // twice: sums
			c.add(e)
		}
	}
	if _, err := decodeETWNet(12, make([]byte, 64)); err != errETWNotTraffic { // TCP connect
		t.Fatalf("connect event: %v", err)
	}
	names := map[uint32]string{4242: "chrome.exe", 777: "curl.exe"} // 1234 has exited
	r := reportFromDelta(c.take(func(pid uint32) string { return names[pid] }), 500)
	wantRows := []wire.ProcessTraffic{
		{Process: "chrome.exe", PID: 4242, BytesIn: 10000, BytesOut: 2896, PacketsIn: 2, PacketsOut: 2,
			Remotes: []wire.Remote{{Proto: "tcp", IP: "93.184.216.34", Port: 443, BytesIn: 10000, BytesOut: 2896, PacketsIn: 2, PacketsOut: 2}}},
		{Process: "curl.exe", PID: 777, BytesOut: 517, PacketsOut: 1,
			Remotes: []wire.Remote{{Proto: "tcp", IP: "2001:db8::1", Port: 443, BytesOut: 517, PacketsOut: 1}}},
		{Process: wire.UnattributedProcess, BytesIn: 420, BytesOut: 40, PacketsIn: 2, PacketsOut: 1, Reasons: []wire.UnattributedReason{
			{Reason: wire.ReasonKernel, Bytes: 300, Packets: 1}, {Reason: wire.ReasonProcessGone, Bytes: 160, Packets: 2}}},
	}
	if !reflect.DeepEqual(r.Processes, wantRows) {
		t.Fatalf("rows\n got %+v\nwant %+v", r.Processes, wantRows)
	}
	if d := c.take(func(uint32) string { return "" }); len(d.Flows) != 0 || !d.Kernel.Zero() {
		t.Fatalf("take is not a delta: %+v", d)
	}
}

func addrLen(id int) int {
	if etwEvents[uint16(id)].v6 {
		return 16
	}
	return 4
}

// FuzzDecodeETWNet: any event data decodes or is refused, never read
// past its end.
func FuzzDecodeETWNet(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/etw/*.bin")
	for _, file := range files {
		raw, _ := os.ReadFile(file)
		base := filepath.Base(file)
		id, _ := strconv.Atoi(base[:strings.IndexByte(base, '-')])
		f.Add(uint16(id), raw)
	}
	f.Fuzz(func(t *testing.T, id uint16, data []byte) {
		e, err := decodeETWNet(id, data)
		if err == nil && (e.Proto != protoTCP && e.Proto != protoUDP || !e.Local.IsValid() || !e.Remote.IsValid()) {
			t.Fatalf("%+v", e)
		}
	})
}
