package netflow

import (
	"runtime"
	"testing"

	"netmon/store/record"
)

// The benchmarks decode softflowd's real datagrams (22 to 30 flows each)
// in a loop, the template datagram included (its templates are then
// known: the steady state of an exporter repeating them), and report
// per flow:
//
//	go test ./collectors/flows/netflow -run '^$' -bench . -benchtime 2s
//
// The Goflow2 ones decode the same datagrams with goflow2's decoders and
// turn their records into record.Flow the way the oracle does.

func BenchmarkDecodeV5(b *testing.B)    { benchDecode(b, "softflowd-v5.pcap") }
func BenchmarkDecodeV9(b *testing.B)    { benchDecode(b, "softflowd-v9.pcap") }
func BenchmarkDecodeIPFIX(b *testing.B) { benchDecode(b, "softflowd-ipfix.pcap") }

func BenchmarkGoflow2V5(b *testing.B)    { benchGoflow2(b, "softflowd-v5.pcap") }
func BenchmarkGoflow2V9(b *testing.B)    { benchGoflow2(b, "softflowd-v9.pcap") }
func BenchmarkGoflow2IPFIX(b *testing.B) { benchGoflow2(b, "softflowd-ipfix.pcap") }

// perFlow reports time and allocations per flow, and flows per datagram.
func perFlow(b *testing.B, flows int, before *runtime.MemStats) {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(flows), "ns/flow")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(flows), "allocs/flow")
	b.ReportMetric(float64(flows)/float64(b.N), "flows/op")
}

func benchDecode(b *testing.B, name string) {
	ds := readDatagrams(b, name)
	d := NewDecoder(DefaultConfig())
	decodeExport(b, d, ds)
	out := make([]record.Flow, 0, 64)
	flows := 0
	b.ReportAllocs()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; b.Loop(); i++ {
		dg := ds[i%len(ds)]
		var err error
		out, _, err = d.Decode(dg.data, softflowdExporter, dg.at, out[:0])
		if err != nil {
			b.Fatal(err)
		}
		flows += len(out)
	}
	perFlow(b, flows, &before)
}

func benchGoflow2(b *testing.B, name string) {
	ds := readDatagrams(b, name)
	o := newOracle()
	for i := range ds {
		if ds[i].data[1] == 9 { // see oracle.decode: goflow2 reads the count as sets
			ds[i].data[2], ds[i].data[3] = 0xff, 0xff
		}
		if _, err := o.decode(ds[i].data, ds[i].at); err != nil {
			b.Fatal(err)
		}
	}
	flows := 0
	b.ReportAllocs()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; b.Loop(); i++ {
		dg := ds[i%len(ds)]
		fs, err := o.decode(dg.data, dg.at)
		if err != nil {
			b.Fatal(err)
		}
		flows += len(fs)
	}
	perFlow(b, flows, &before)
}

// BenchmarkDecodeV9Parallel: all cores decoding through one Decoder,
// the hub's setup; shows what the template locks cost under contention.
func BenchmarkDecodeV9Parallel(b *testing.B) {
	ds := readDatagrams(b, "softflowd-v9.pcap")
	d := NewDecoder(DefaultConfig())
	decodeExport(b, d, ds)
	total := 0
	for _, dg := range ds {
		fs, _, _ := d.Decode(dg.data, softflowdExporter, dg.at, nil)
		total += len(fs)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		out := make([]record.Flow, 0, 64)
		for i := 0; pb.Next(); i++ {
			dg := ds[i%len(ds)]
			out, _, _ = d.Decode(dg.data, softflowdExporter, dg.at, out[:0])
		}
	})
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*float64(total)/float64(len(ds))), "ns/flow")
}
