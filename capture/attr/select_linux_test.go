package attr

import (
	"io"
	"log/slog"
	"testing"
)

func TestOpenRefusalsLinux(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		method string
		want   Status
	}{
		{MethodOff, Status{Method: MethodOff, Note: "collect.method off"}},
		{MethodETW, Status{Method: MethodOff, Note: "etw: Windows only"}},
		{"npcap", Status{Method: MethodOff, Note: "npcap: unknown method"}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			b, st := Open(log, Config{Method: tc.method})
			if b != nil || st != tc.want {
				t.Fatalf("got %v %+v, want %+v", b, st, tc.want)
			}
		})
	}
	// auto tries ebpf first: as root on a kernel with BTF it starts
	// (TestEBPFRefusedWithoutPrivilege covers the refusal and the note
	// that lists it before pcap's); the pcap it runs beside it for the
	// names cannot, and the note says what is missing.
	needPeers(t)
	b, st := Open(log, Config{Method: MethodAuto, PcapInterface: "nosuch0"})
	if b == nil || st != (Status{Method: MethodEBPF, Note: `no L7 and DNS names: pcap: interface "nosuch0" not found`}) {
		t.Fatalf("auto: %v %+v, want ebpf", b, st)
	}
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
}
