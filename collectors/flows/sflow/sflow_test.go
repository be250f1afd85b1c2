package sflow

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store/record"
)

var (
	v4src = netip.MustParseAddr("10.1.1.1")
	v4dst = netip.MustParseAddr("10.2.2.2")
	v6src = netip.MustParseAddr("2001:db8::1")
	v6dst = netip.MustParseAddr("2001:db8::2")
)

// flow is the Flow a test frame should give, TS and Exporter filled.
func flow(src, dst netip.Addr, sp, dp uint16, proto uint8, rate, frameLen uint64) record.Flow {
	return record.Flow{
		TS: testNow.Unix(), Exporter: testExporter, Src: src, Dst: dst,
		SrcPort: sp, DstPort: dp, Proto: proto, Packets: rate, Octets: frameLen * rate,
	}
}

// Sampled frames used by several rows.
var (
	tcp4   = cat(eth(0x0800), ip4(6, 0, 0), ports(1234, 80, 16))
	udp6   = cat(eth(0x86dd), ip6(17), ports(5353, 53, 4))
	good   = rawRecord(1, 1500, tcp4)
	goodV6 = rawRecord(1, 200, udp6)
	tcpOK  = flow(v4src, v4dst, 1234, 80, 6, 100, 1500)
	udpOK  = flow(v6src, v6dst, 5353, 53, 17, 100, 200)
)

// TestHostile is RELIABILITY.md case 2 and the decoding details: each row
// is one datagram and what Decode must make of it.
func TestHostile(t *testing.T) {
	corrupt := flowSampleN(100, 3, good) // announces 3 records, holds 1
	tests := []struct {
		name   string
		data   []byte
		err    error
		res    Result
		flows  []record.Flow
		oracle bool // goflow2 must agree (a well-formed plain row)
	}{
		{name: "one flow sample", data: datagram(-1, flowSample(100, switchRecord(), good)),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{tcpOK}, oracle: true},
		{name: "IPv6 agent, IPv6 UDP", data: datagram6(flowSample(100, goodV6)),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{udpOK}, oracle: true},
		{name: "expanded flow sample", data: datagram(-1, expandedSample(100, good)),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{tcpOK}, oracle: true},
		{name: "counter samples counted and skipped", data: datagram(-1, counterSample(2), flowSample(100, good), counterSample(4)),
			res: Result{Samples: 3, FlowSamples: 1, CounterSamples: 2, Flows: 1}, flows: []record.Flow{tcpOK}, oracle: true},
		{name: "unknown enterprise and drop sample skipped by length",
			data: datagram(-1, sample(4413<<12|5, make([]byte, 20)), sample(5, make([]byte, 36)), flowSample(100, good)),
			res:  Result{Samples: 3, FlowSamples: 1, SkippedSamples: 2, Flows: 1}, flows: []record.Flow{tcpOK}},
		{name: "middle sample corrupt (record count beyond its length)",
			data: datagram(-1, flowSample(100, good), corrupt, flowSample(100, goodV6)),
			res:  Result{Samples: 3, FlowSamples: 2, SkippedSamples: 1, Flows: 2}, flows: []record.Flow{tcpOK, udpOK}},
		{name: "middle sample corrupt (header length beyond its record)",
			data: datagram(-1, flowSample(100, good), flowSample(100, cat(be(nil, 1, 20, 1, 1500, 4, 64), make([]byte, 4))), flowSample(100, goodV6)),
			res:  Result{Samples: 3, FlowSamples: 2, SkippedSamples: 1, Flows: 2}, flows: []record.Flow{tcpOK, udpOK}},
		{name: "middle sample corrupt (record length beyond its sample)",
			data: datagram(-1, flowSample(100, good), flowSample(100, be(nil, 1, 4000)), flowSample(100, goodV6)),
			res:  Result{Samples: 3, FlowSamples: 2, SkippedSamples: 1, Flows: 2}, flows: []record.Flow{tcpOK, udpOK}},
		{name: "flow sample shorter than its fixed part", data: datagram(-1, sample(1, make([]byte, 12)), sample(3, make([]byte, 40)), flowSample(100, good)),
			res: Result{Samples: 3, FlowSamples: 1, SkippedSamples: 2, Flows: 1}, flows: []record.Flow{tcpOK}},
		{name: "raw header record shorter than its fixed part", data: datagram(-1, flowSample(100, be(nil, 1, 8, 1, 1500))),
			res: Result{Samples: 1, SkippedSamples: 1}},
		{name: "record count 2^32-1", data: datagram(-1, flowSampleN(100, 0xffffffff, good), flowSample(100, good)),
			res: Result{Samples: 2, FlowSamples: 1, SkippedSamples: 1, Flows: 1}, flows: []record.Flow{tcpOK}},
		{name: "sample count 2^32-1 with two samples", data: datagram(0xffffffff, flowSample(100, good), flowSample(100, goodV6)),
			res: Result{Samples: 2, FlowSamples: 2, Flows: 2, Truncated: true}, flows: []record.Flow{tcpOK, udpOK}},
		{name: "last sample longer than the datagram", data: datagram(-1, flowSample(100, good), be(nil, 1, 1<<31), flowSample(100, good)),
			res: Result{Samples: 2, FlowSamples: 1, SkippedSamples: 1, Flows: 1, Truncated: true}, flows: []record.Flow{tcpOK}},
		{name: "datagram cut inside a sample", data: datagram(-1, flowSample(100, good), flowSample(100, good))[:28+len(flowSample(100, good))+60],
			res: Result{Samples: 2, FlowSamples: 1, SkippedSamples: 1, Flows: 1, Truncated: true}, flows: []record.Flow{tcpOK}},
		{name: "stray bytes where a sample should start", data: append(datagram(2, flowSample(100, good)), 1, 2, 3),
			res: Result{Samples: 2, FlowSamples: 1, SkippedSamples: 1, Flows: 1, Truncated: true}, flows: []record.Flow{tcpOK}},
		{name: "no samples", data: datagram(0), res: Result{}},
		{name: "empty ethertype (goflow2 #252): 12-byte Ethernet header", data: datagram(-1, flowSample(100, rawRecord(1, 60, eth(0)[:12]))),
			res: Result{Samples: 1, FlowSamples: 1}},
		{name: "empty raw header", data: datagram(-1, flowSample(100, rawRecord(1, 60, nil))),
			res: Result{Samples: 1, FlowSamples: 1}},
		{name: "802.1Q tag with nothing after it", data: datagram(-1, flowSample(100, rawRecord(1, 60, eth(0x8100)[:16]))),
			res: Result{Samples: 1, FlowSamples: 1}},
		{name: "802.1Q", data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x0800, 0x8100), ip4(6, 0, 0), ports(1234, 80, 16))))),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{tcpOK}, oracle: true},
		{name: "QinQ 0x88a8 + 0x8100", data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x0800, 0x88a8, 0x8100), ip4(6, 0, 0), ports(1234, 80, 16))))),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{tcpOK}},
		{name: "five tags: not decoded", data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x0800, 0x8100, 0x8100, 0x8100, 0x8100, 0x8100), ip4(6, 0, 0), ports(1, 2, 0))))),
			res: Result{Samples: 1, FlowSamples: 1}},
		{name: "ARP: no flow", data: datagram(-1, flowSample(100, rawRecord(1, 60, cat(eth(0x0806), make([]byte, 28))))),
			res: Result{Samples: 1, FlowSamples: 1}},
		{name: "header protocol 11 (IPv4, no Ethernet)", data: datagram(-1, flowSample(100, rawRecord(11, 1500, cat(ip4(6, 0, 0), ports(1234, 80, 16))))),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{tcpOK}},
		{name: "header protocol 12 (IPv6, no Ethernet)", data: datagram(-1, flowSample(100, rawRecord(12, 200, cat(ip6(17), ports(5353, 53, 4))))),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{udpOK}},
		{name: "unknown header protocol", data: datagram(-1, flowSample(100, rawRecord(7, 1500, tcp4))),
			res: Result{Samples: 1, FlowSamples: 1}},
		{name: "IPv4 options skipped by IHL", data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x0800), ip4(6, 0, 8), ports(1234, 80, 16))))),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{tcpOK}},
		{name: "IPv4 IHL below 5: no flow", data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x0800), []byte{0x44}, ip4(6, 0, 0)[1:], ports(1, 2, 16))))),
			res: Result{Samples: 1, FlowSamples: 1}},
		{name: "IPv4 later fragment: no ports", data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x0800), ip4(17, 185, 0), ports(1, 2, 16))))),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{flow(v4src, v4dst, 0, 0, 17, 100, 1500)}},
		{name: "IPv4 header cut before the addresses", data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x0800), ip4(6, 0, 0)[:16])))),
			res: Result{Samples: 1, FlowSamples: 1}},
		{name: "TCP header cut after 2 bytes: ports 0", data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x0800), ip4(6, 0, 0), []byte{4, 210})))),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{flow(v4src, v4dst, 0, 0, 6, 100, 1500)}},
		{name: "IPv6 hop-by-hop, then first fragment, then TCP",
			data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x86dd), ip6(0), []byte{44, 0, 1, 4, 0, 0, 0, 0}, []byte{6, 0, 0, 1, 0, 0, 0, 9}, ports(1234, 80, 16))))),
			res:  Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{flow(v6src, v6dst, 1234, 80, 6, 100, 1500)}},
		{name: "IPv6 later fragment: no ports",
			data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x86dd), ip6(44), []byte{17, 0, 0, 0x50, 0, 0, 0, 9}, ports(1, 2, 4))))),
			res:  Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{flow(v6src, v6dst, 0, 0, 17, 100, 1500)}},
		{name: "IPv6 extension header cut: protocol is its next header",
			data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x86dd), ip6(60), []byte{6, 3, 0, 0})))),
			res:  Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{flow(v6src, v6dst, 0, 0, 6, 100, 1500)}},
		{name: "IPv4 packet in an IPv6 EtherType: no flow", data: datagram(-1, flowSample(100, rawRecord(1, 1500, cat(eth(0x86dd), ip4(6, 0, 0), make([]byte, 40))))),
			res: Result{Samples: 1, FlowSamples: 1}},
		{name: "sampling rate 0 read as 1", data: datagram(-1, flowSample(0, good)),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{flow(v4src, v4dst, 1234, 80, 6, 1, 1500)}},
		{name: "largest rate and frame length do not overflow", data: datagram(-1, flowSample(0xffffffff, rawRecord(1, 0xffffffff, tcp4))),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{flow(v4src, v4dst, 1234, 80, 6, 0xffffffff, 0xffffffff)}},
		{name: "only the first raw header record counts", data: datagram(-1, flowSample(100, good, goodV6)),
			res: Result{Samples: 1, FlowSamples: 1, Flows: 1}, flows: []record.Flow{tcpOK}},
		{name: "empty datagram", data: nil, err: ErrShort},
		{name: "version 4", data: append(be(nil, 4, 1), make([]byte, 20)...), err: ErrVersion},
		{name: "NetFlow v5 header", data: append([]byte{0, 5, 0, 1}, make([]byte, 20)...), err: ErrVersion},
		{name: "agent address type 3", data: append(be(nil, 5, 3), make([]byte, 40)...), err: ErrAgentAddress},
		{name: "header cut inside the IPv6 agent address", data: datagram6()[:20], err: ErrShort},
		{name: "header cut before the sample count", data: datagram(0)[:24], err: ErrShort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, res, err := Decode(tt.data, testExporter, testNow, nil)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if diff := cmp.Diff(res, tt.res); diff != "" {
				t.Errorf("Result (-got, +want):\n%s", diff)
			}
			addrEq := cmp.Comparer(func(a, b netip.Addr) bool { return a == b })
			if diff := cmp.Diff(got, tt.flows, addrEq); diff != "" {
				t.Errorf("flows (-got, +want):\n%s", diff)
			}
			if tt.oracle {
				if diff := cmp.Diff(got, oracle(t, tt.data), addrEq); diff != "" {
					t.Errorf("Decode vs goflow2 (-got, +want):\n%s", diff)
				}
			}
		})
	}
}

// TestErrorAppendsNothing checks that the caller's slice is left as it
// was on error, so a collector can count the datagram once and move on.
func TestErrorAppendsNothing(t *testing.T) {
	out := make([]record.Flow, 1, 8)
	got, _, err := Decode(datagram6()[:20], testExporter, testNow, out)
	if err == nil || len(got) != 1 {
		t.Fatalf("got %d flows, err %v; want 1 and an error", len(got), err)
	}
}

// TestPoisonIsolation is RELIABILITY.md case 6 at the decoder: crash-shaped
// datagrams among 100 000 valid ones from the golden capture; the flow
// count is exact and the error count equals the poison count.
func TestPoisonIsolation(t *testing.T) {
	golden := goldenDatagrams(t)
	var wantPer []int
	for _, d := range golden {
		fs, _, _ := Decode(d, testExporter, testNow, nil)
		wantPer = append(wantPer, len(fs))
	}
	poison := [][]byte{
		nil, {0, 0, 0, 5}, datagram6()[:20], append(be(nil, 5, 9), make([]byte, 40)...),
		be(nil, 5, 1, 0, 0, 0, 0, 0xffffffff),
	}
	const valid = 100_000
	var flows, wantFlows, errs, poisoned int
	out := make([]record.Flow, 0, 64)
	for i := range valid {
		if i%997 == 0 {
			p := poison[poisoned%len(poison)]
			poisoned++
			if _, _, err := Decode(p, testExporter, testNow, out[:0]); err != nil {
				errs++
			}
		}
		var err error
		var res Result
		out, res, err = Decode(golden[i%len(golden)], testExporter, testNow, out[:0])
		if err != nil {
			t.Fatalf("valid datagram %d: %v", i, err)
		}
		flows += res.Flows
		wantFlows += wantPer[i%len(golden)]
	}
	// The last poison (a count of 2^32-1 and no samples) is a valid empty
	// datagram, not an error: it yields nothing and is not counted.
	wantErrs := poisoned - poisoned/len(poison)
	if flows != wantFlows || errs != wantErrs {
		t.Fatalf("flows %d, want %d; errors %d, want %d (of %d poison)", flows, wantFlows, errs, wantErrs, poisoned)
	}
}
