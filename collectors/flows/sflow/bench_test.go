package sflow

import (
	"bytes"
	"runtime"
	"testing"

	gfsflow "github.com/netsampler/goflow2/v2/decoders/sflow"
	protoproducer "github.com/netsampler/goflow2/v2/producer/proto"

	"netmon/store/record"
)

// FuzzDecode feeds arbitrary datagrams, seeded with the golden capture and
// the hostile rows, and checks the invariants Decode promises: no panic,
// nothing appended on error, every sample counted once, no more flows than
// flow samples, no more samples than 8-byte headers fit in the datagram.
func FuzzDecode(f *testing.F) {
	for _, d := range goldenDatagrams(f) {
		f.Add(d)
	}
	f.Add(datagram(-1, flowSample(100, good), flowSampleN(100, 3, good), flowSample(100, goodV6)))
	f.Add(datagram(0xffffffff, flowSample(100, rawRecord(1, 60, eth(0)[:12]))))
	f.Add(datagram6(expandedSample(100, rawRecord(1, 1500, cat(eth(0x86dd, 0x88a8, 0x8100), ip6(0), []byte{44, 0, 1, 4, 0, 0, 0, 0}, []byte{6, 0, 0, 1, 0, 0, 0, 9}, ports(1, 2, 0)))), counterSample(2)))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := make([]record.Flow, 1, 4)
		got, res, err := Decode(data, testExporter, testNow, out)
		if err != nil {
			if len(got) != 1 {
				t.Fatalf("error %v but %d flows appended", err, len(got)-1)
			}
			return
		}
		if res.Samples != res.FlowSamples+res.CounterSamples+res.SkippedSamples {
			t.Fatalf("inconsistent %+v", res)
		}
		if res.Flows != len(got)-1 || res.Flows > res.FlowSamples {
			t.Fatalf("%+v with %d flows appended", res, len(got)-1)
		}
		if res.Samples > (len(data)+7)/8 {
			t.Fatalf("%d samples in %d bytes", res.Samples, len(data))
		}
		for _, f := range got[1:] {
			if !f.Src.IsValid() || !f.Dst.IsValid() || f.Src.Is4() != f.Dst.Is4() || f.Packets == 0 {
				t.Fatalf("bad flow %+v", f)
			}
		}
	})
}

// TestZeroAlloc holds the package's promise: decoding the golden
// datagrams into a slice with room allocates nothing.
func TestZeroAlloc(t *testing.T) {
	ds := goldenDatagrams(t)
	out := make([]record.Flow, 0, 64)
	allocs := testing.AllocsPerRun(100, func() {
		for _, d := range ds {
			out, _, _ = Decode(d, testExporter, testNow, out[:0])
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per pass, want 0", allocs)
	}
}

// benchSamples counts the samples of the golden datagrams.
func benchSamples(b *testing.B, ds [][]byte) int {
	n := 0
	for _, d := range ds {
		_, res, err := Decode(d, testExporter, testNow, nil)
		if err != nil {
			b.Fatal(err)
		}
		n += res.Samples
	}
	return n
}

// reportPerSample adds ns/sample and allocs/sample to a benchmark whose
// operation is one pass over the golden datagrams.
func reportPerSample(b *testing.B, samples int, run func()) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	total := float64(b.N) * float64(samples)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/sample")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/sample")
}

// BenchmarkDecode decodes the datagrams pmacctd sent (about 6 samples
// each, 128-byte raw headers): one operation is the whole capture.
func BenchmarkDecode(b *testing.B) {
	ds := goldenDatagrams(b)
	out := make([]record.Flow, 0, 64)
	reportPerSample(b, benchSamples(b, ds), func() {
		for _, d := range ds {
			out, _, _ = Decode(d, testExporter, testNow, out[:0])
		}
	})
}

// BenchmarkGoflow2 does the same work with goflow2's decoder and protobuf
// producer (which also parses the raw header), for comparison.
func BenchmarkGoflow2(b *testing.B) {
	ds := goldenDatagrams(b)
	reportPerSample(b, benchSamples(b, ds), func() {
		for _, d := range ds {
			var pkt gfsflow.Packet
			if err := gfsflow.DecodeMessageVersion(bytes.NewBuffer(d), &pkt); err != nil {
				b.Fatal(err)
			}
			if _, err := protoproducer.ProcessMessageSFlowConfig(&pkt, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
