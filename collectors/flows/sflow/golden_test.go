package sflow

import (
	"bytes"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gfsflow "github.com/netsampler/goflow2/v2/decoders/sflow"
	protoproducer "github.com/netsampler/goflow2/v2/producer/proto"

	"netmon/store/record"
)

var (
	testExporter = netip.MustParseAddr("192.0.2.200")
	testNow      = time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)
)

// goldenDatagrams returns the sFlow payloads of sflow.pcap (pmacctd's
// output for in.pcap, see testdata/flows/sflow/README.md).
func goldenDatagrams(tb testing.TB) [][]byte {
	tb.Helper()
	ds := readPcapPayloads(tb, filepath.Join(testdataDir, sflowPcap), true)
	if len(ds) == 0 {
		tb.Fatal("no datagram in sflow.pcap")
	}
	return ds
}

// oracle decodes a datagram with goflow2 (decoder and protobuf producer)
// and returns its flows in our vocabulary, scaled as Decode scales them.
// A sample whose header goflow2 finds no IP address in yields a Flow with
// invalid addresses, which the caller drops as Decode does.
func oracle(tb testing.TB, data []byte) []record.Flow {
	tb.Helper()
	var pkt gfsflow.Packet
	if err := gfsflow.DecodeMessageVersion(bytes.NewBuffer(data), &pkt); err != nil {
		tb.Fatalf("goflow2: %v", err)
	}
	msgs, err := protoproducer.ProcessMessageSFlowConfig(&pkt, nil)
	if err != nil {
		tb.Fatalf("goflow2 producer: %v", err)
	}
	var out []record.Flow
	for _, m := range msgs {
		fm := m.(*protoproducer.ProtoProducerMessage)
		src, _ := netip.AddrFromSlice(fm.SrcAddr)
		dst, _ := netip.AddrFromSlice(fm.DstAddr)
		if !src.IsValid() {
			continue
		}
		out = append(out, record.Flow{
			TS: testNow.Unix(), Exporter: testExporter,
			Src: src, Dst: dst,
			SrcPort: uint16(fm.SrcPort), DstPort: uint16(fm.DstPort),
			Proto:   uint8(fm.Proto),
			Packets: fm.SamplingRate,
			Octets:  fm.Bytes * fm.SamplingRate,
		})
	}
	return out
}

// TestGolden decodes every datagram pmacctd sent and compares each flow
// field by field with goflow2's decoding, then the whole sequence with the
// frames of in.pcap (the ground truth), and checks the sample count.
func TestGolden(t *testing.T) {
	var all []record.Flow
	var sum Result
	for i, d := range goldenDatagrams(t) {
		got, res, err := Decode(d, testExporter, testNow, nil)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if diff := cmp.Diff(got, oracle(t, d), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
			t.Errorf("datagram %d: Decode vs goflow2 (-got, +want):\n%s", i, diff)
		}
		if res.Flows != len(got) || res.Samples != res.FlowSamples+res.CounterSamples+res.SkippedSamples {
			t.Errorf("datagram %d: inconsistent %+v for %d flows", i, res, len(got))
		}
		sum.Samples += res.Samples
		sum.FlowSamples += res.FlowSamples
		sum.CounterSamples += res.CounterSamples
		sum.SkippedSamples += res.SkippedSamples
		sum.Flows += res.Flows
		all = append(all, got...)
	}
	t.Logf("%d flow samples, %d counter samples, %d skipped, %d flows", sum.FlowSamples, sum.CounterSamples, sum.SkippedSamples, sum.Flows)

	// Sampling rate 1: one sample per packet of in.pcap (PEERS.md saw
	// 199 999 of 200 000 with a large pcap; this small one loses none).
	frames := genFrames()
	if sum.FlowSamples != len(frames) || sum.SkippedSamples != 0 || sum.Flows != len(frames) {
		t.Fatalf("got %+v, want %d flow samples and flows", sum, len(frames))
	}
	// pmacctd keeps the packet order, and its frame length counts the
	// 4-byte FCS a pcap does not hold ("stripped: 4" in every record).
	for i, f := range frames {
		want := f.want
		want.TS, want.Exporter, want.Packets, want.Octets = testNow.Unix(), testExporter, 1, want.Octets+4
		if diff := cmp.Diff(all[i], want, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
			t.Errorf("frame %d (-got, +want):\n%s", i, diff)
		}
	}
}
