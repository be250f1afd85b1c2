package store

import (
	"net/netip"
	"testing"

	"netmon/store/record"
)

// BenchmarkAggregateFlows sums 100 000 records over 5 000 distinct
// 5-tuples into minute and hour rows: the in-memory part of WriteFlows.
func BenchmarkAggregateFlows(b *testing.B) {
	fs := make([]record.Flow, 100_000)
	for i := range fs {
		fs[i] = record.Flow{TS: 1_700_000_000 + int64(i%60), Exporter: netip.MustParseAddr("192.0.2.1"),
			Src: netip.AddrFrom4([4]byte{10, 0, byte(i % 5000 / 256), byte(i % 5000)}), Dst: netip.MustParseAddr("198.51.100.7"),
			SrcPort: uint16(i % 5000), DstPort: 443, Proto: 6, Packets: 3, Octets: 1500}
	}
	b.ReportAllocs()
	for b.Loop() {
		aggregateFlows([][]record.Flow{fs}, len(fs))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(fs)), "ns/record")
}
