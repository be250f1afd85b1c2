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
		{MethodEBPF, Status{Method: MethodOff, Note: "ebpf: not built yet in this version"}},
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
	// auto tries ebpf first, then pcap (which here fails on a missing
	// interface: the note lists both refusals in order).
	b, st := Open(log, Config{Method: MethodAuto, PcapInterface: "nosuch0"})
	want := Status{Method: MethodOff, Note: `ebpf: not built yet in this version; pcap: interface "nosuch0" not found`}
	if b != nil || st != want {
		t.Fatalf("auto: %v %+v, want %+v", b, st, want)
	}
}
