package capture

import (
	"testing"

	"github.com/gopacket/gopacket"
)

// FuzzProcess feeds arbitrary bytes to the packet path as Ethernet frames:
// no panic, and the totals stay consistent (every frame counted once under
// one protocol, every byte once in one direction of the history).
func FuzzProcess(f *testing.F) {
	for _, fr := range loadFrames(f, "mixed.pcap", "dns.pcap", "vlan.pcap", "corrupt.pcap") {
		f.Add(fr.data)
	}
	f.Add([]byte{})
	e := newTestEngine()
	var n int64
	f.Fuzz(func(t *testing.T, data []byte) {
		n++
		if n%4096 == 0 {
			e.Reset()
		}
		e.Process(data, gopacket.CaptureInfo{Timestamp: fixtureBase, CaptureLength: len(data), Length: len(data) + 1})
		if n%64 != 0 { // a snapshot costs more than many packets
			return
		}
		s := e.Snapshot()
		var protos int64
		for _, c := range s.Protocols {
			protos += c
		}
		in, out, local, packets := historySum(s)
		if protos != s.TotalPackets || packets != s.TotalPackets || in+out+local != s.TotalBytes {
			t.Fatalf("inconsistent totals: %d packets, protocols %d, history %d; %d bytes, history %d",
				s.TotalPackets, protos, packets, s.TotalBytes, in+out+local)
		}
	})
}
