package intake

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/agentmode/wire"
	"netmon/store/record"
)

// deepSink keeps what PutDeep is given.
type deepSink struct {
	record.Sink
	got []record.Deep
}

func (s *deepSink) PutDeep(ds []record.Deep) bool { s.got = append(s.got, ds...); return true }

// TestTakeDeep: the intake bounds and cleans what an agent sends before it
// reaches the store, and keeps nothing when the hub policy is off.
func TestTakeDeep(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	remotes := make([]wire.Remote, wire.MaxRemotes+5)
	for i := range remotes {
		remotes[i] = wire.Remote{Proto: "TCP", IP: "::ffff:192.0.2.1", Port: uint16(i + 1), BytesIn: 1}
	}
	remotes[0].IP = "not an address"
	batch := Batch{TS: 600, DeepSections: DeepSections{
		Processes: []wire.ProcessTraffic{
			{Process: "", PID: -3, BytesIn: 1, Reasons: []wire.UnattributedReason{{Reason: "kernel socket", Bytes: 1}}},
			{Process: long + "\xff", PID: 5, BytesIn: 1 << 62, Remotes: remotes, Reasons: []wire.UnattributedReason{{Reason: "ignored", Bytes: 9}}},
		},
		L7:  []wire.L7Observation{{Host: "EXAMPLE.com\xff", Kind: "TLS", Process: "curl", Bytes: 3, Hits: 1}},
		DNS: []wire.DNSObservation{{Domain: long, Process: "", Queries: 1}},
	}}
	sink := &deepSink{}
	s := New(slog.New(slog.DiscardHandler), Config{PcapEnabled: true}, nil, sink)
	if err := s.takeDeep(7, 3, &batch); err != nil {
		t.Fatal(err)
	}
	if len(sink.got) != 1 {
		t.Fatalf("queued %d records, want 1", len(sink.got))
	}
	d := sink.got[0]
	if d.AgentID != 7 || d.Seq != 3 || d.TS != 600 {
		t.Errorf("record of agent %d seq %d ts %d", d.AgentID, d.Seq, d.TS)
	}
	clipped := strings.Repeat("é", 128) // 256 bytes, cut on a rune boundary
	want := []record.ProcessBytes{{Process: "(unattributed)", BytesIn: 1}, {Process: clipped, PID: 5, BytesIn: maxDeepValue}}
	if diff := cmp.Diff(d.Processes, want); diff != "" {
		t.Errorf("processes (-got, +want):\n%s", diff)
	}
	if diff := cmp.Diff(d.Unattributed, []record.ReasonBytes{{Reason: "kernel socket", Bytes: 1}}); diff != "" {
		t.Errorf("reasons (-got, +want):\n%s", diff)
	}
	// The first MaxRemotes only, less the one that is no address;
	// IPv4-mapped addresses unmapped, protocols lower case.
	if len(d.Remotes) != wire.MaxRemotes-1 || d.Remotes[0] != (record.RemoteBytes{Process: clipped, Proto: "tcp", IP: "192.0.2.1", Port: 2, BytesIn: 1}) {
		t.Errorf("remotes: %d, first %+v", len(d.Remotes), d.Remotes[0])
	}
	if diff := cmp.Diff(d.L7, []record.L7Hit{{Host: "EXAMPLE.com\ufffd", Kind: "tls", Process: "curl", Bytes: 3, Hits: 1}}); diff != "" {
		t.Errorf("l7 (-got, +want):\n%s", diff)
	}
	if len(d.DNS) != 1 || len(d.DNS[0].Domain) > maxHostText || d.DNS[0].Process != "(unattributed)" {
		t.Errorf("dns %+v", d.DNS)
	}

	sink.got = nil
	if err := New(slog.New(slog.DiscardHandler), Config{}, nil, sink).takeDeep(7, 4, &batch); err != nil || len(sink.got) != 0 {
		t.Errorf("with -agent-pcap=false: err %v, queued %d", err, len(sink.got))
	}
}
