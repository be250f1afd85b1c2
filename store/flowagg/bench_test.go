package flowagg

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"netmon/store/record"
)

// BenchmarkAggregateFlows sums records into exporter minutes and closes
// them (the in-memory part of the flow path), over 5 000 and over 1 000 000
// distinct 5-tuples: the cost per record must not depend on cardinality
// beyond the cache misses of a bigger map.
func BenchmarkAggregateFlows(b *testing.B) {
	for _, distinct := range []int{5000, 1_000_000} {
		b.Run(fmt.Sprintf("distinct=%d", distinct), func(b *testing.B) {
			fs := make([]record.Flow, 100_000)
			exp := netip.MustParseAddr("192.0.2.1")
			dst := netip.MustParseAddr("198.51.100.7")
			now := time.Now()
			next := 0
			b.ReportAllocs()
			records := 0
			for b.Loop() {
				a := New(DefaultConfig(), nil, nil)
				for range 10 * max(1, distinct/len(fs)) {
					for i := range fs {
						k := next % distinct
						next++
						fs[i] = record.Flow{TS: now.Unix(), Exporter: exp, Src: netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)}),
							Dst: dst, SrcPort: uint16(k), DstPort: 443, Proto: 6, Packets: 3, Octets: 1500}
					}
					a.Add(fs, now)
					records += len(fs)
				}
				a.Due(now, true)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
		})
	}
}
