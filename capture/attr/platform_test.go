package attr

import (
	"errors"
	"io"
	"log/slog"
	"testing"
)

// fakeBackend is a started backend of the platform tests.
type fakeBackend struct{ method, iface, note string }

func (f *fakeBackend) Method() string  { return f.method }
func (f *fakeBackend) Iface() string   { return f.iface }
func (f *fakeBackend) Note() string    { return f.note }
func (f *fakeBackend) Collect() Report { return Report{} }
func (f *fakeBackend) Stop() error     { return nil }

func refuse(note string) startFunc {
	return func(*slog.Logger, Config) (Backend, error) { return nil, errors.New(note) }
}

func runs(method, iface, note string) startFunc {
	return func(*slog.Logger, Config) (Backend, error) { return &fakeBackend{method, iface, note}, nil }
}

// The auto order, the fallbacks and the exact attr_note of every
// system, run on Linux with each system's refusals: the notes are what
// the Windows and macOS starters return (platform.go), spelled out here
// so a changed text fails.
func TestPlatformNotes(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	winDenied := starters{etw: refuse(noteETWElevated), pcap: refuse(notePcapWindowsDenied)}
	winNoNpcap := starters{etw: runs(MethodETW, "", noNamesPrefix+notePcapNoNpcap), pcap: refuse(notePcapNoNpcap)}
	winNoNpcapDenied := starters{etw: refuse(noteETWElevated), pcap: refuse(notePcapNoNpcap)}
	winNoAdapters := starters{etw: runs(MethodETW, "", noNamesPrefix+notePcapNoAdapters), pcap: refuse(notePcapNoAdapters)}
	winPcapOnly := starters{etw: refuse(noteETWElevated), pcap: runs(MethodPcap, "Ethernet", "")}
	winRuns := starters{etw: runs(MethodETW, "Ethernet", ""), pcap: runs(MethodPcap, "Ethernet", "")}
	macRuns := starters{pcap: runs(MethodPcap, "en0", noteDarwinNoPIDs)}
	macDenied := starters{pcap: refuse(notePcapDarwinDenied)}
	linuxDenied := starters{ebpf: refuse("ebpf: needs CAP_BPF and CAP_PERFMON, or root"), pcap: refuse("pcap: needs CAP_NET_RAW or root")}
	for _, tc := range []struct {
		name, goos, method string
		s                  starters
		want               Status
	}{
		{"windows auto not elevated, npcap admin-only", "windows", MethodAuto, winDenied, Status{Method: MethodOff,
			Note: "etw: needs an elevated agent (run as administrator); pcap: needs an elevated agent (Npcap is restricted to administrators)"}},
		{"windows auto not elevated, npcap runs", "windows", MethodAuto, winPcapOnly, Status{Method: MethodPcap, Iface: "Ethernet",
			Note: "etw: needs an elevated agent (run as administrator)"}},
		{"windows auto not elevated, no npcap", "windows", MethodAuto, winNoNpcapDenied, Status{Method: MethodOff,
			Note: "etw: needs an elevated agent (run as administrator); pcap: needs Npcap (wpcap.dll not found)"}},
		{"windows auto", "windows", MethodAuto, winRuns, Status{Method: MethodETW, Iface: "Ethernet"}},
		{"windows auto without npcap", "windows", MethodAuto, winNoNpcap, Status{Method: MethodETW,
			Note: "no L7 and DNS names: pcap: needs Npcap (wpcap.dll not found)"}},
		{"windows pcap", "windows", MethodPcap, winRuns, Status{Method: MethodPcap, Iface: "Ethernet"}},
		{"windows pcap without npcap falls back to etw", "windows", MethodPcap, winNoNpcap, Status{Method: MethodETW,
			Note: "pcap: needs Npcap (wpcap.dll not found); no L7 and DNS names: pcap: needs Npcap (wpcap.dll not found)"}},
		{"windows pcap without npcap not elevated", "windows", MethodPcap, winNoNpcapDenied, Status{Method: MethodOff,
			Note: "pcap: needs Npcap (wpcap.dll not found); etw: needs an elevated agent (run as administrator)"}},
		// Npcap loads: no fallback (spec 1: only where the packet
		// library cannot load), even though etw would run.
		{"windows pcap without adapters does not fall back", "windows", MethodPcap, winNoAdapters, Status{Method: MethodOff,
			Note: "pcap: Npcap lists no adapters (driver not running, or restricted to administrators)"}},
		{"windows pcap denied does not fall back", "windows", MethodPcap, winDenied, Status{Method: MethodOff,
			Note: "pcap: needs an elevated agent (Npcap is restricted to administrators)"}},
		{"windows etw", "windows", MethodETW, winDenied, Status{Method: MethodOff, Note: "etw: needs an elevated agent (run as administrator)"}},
		{"windows ebpf", "windows", MethodEBPF, winRuns, Status{Method: MethodOff, Note: "ebpf: Linux only"}},
		{"windows off", "windows", MethodOff, winRuns, Status{Method: MethodOff, Note: "collect.method off"}},
		{"macos auto", "darwin", MethodAuto, macRuns, Status{Method: MethodPcap, Iface: "en0",
			Note: "pcap: bytes unattributed (no socket table on macOS without cgo); L7 and DNS names kept"}},
		{"macos pcap", "darwin", MethodPcap, macRuns, Status{Method: MethodPcap, Iface: "en0",
			Note: "pcap: bytes unattributed (no socket table on macOS without cgo); L7 and DNS names kept"}},
		{"macos auto denied", "darwin", MethodAuto, macDenied, Status{Method: MethodOff, Note: "pcap: needs root or read access to /dev/bpf*"}},
		{"macos etw", "darwin", MethodETW, macRuns, Status{Method: MethodOff, Note: "etw: Windows only"}},
		{"macos ebpf", "darwin", MethodEBPF, macRuns, Status{Method: MethodOff, Note: "ebpf: Linux only"}},
		{"linux auto denied", "linux", MethodAuto, linuxDenied, Status{Method: MethodOff,
			Note: "ebpf: needs CAP_BPF and CAP_PERFMON, or root; pcap: needs CAP_NET_RAW or root"}},
		{"linux etw", "linux", MethodETW, linuxDenied, Status{Method: MethodOff, Note: "etw: Windows only"}},
		{"freebsd without pcap", "freebsd", MethodAuto, starters{}, Status{Method: MethodOff, Note: "pcap: not built for freebsd"}},
		{"unknown method", "darwin", "npcap", macRuns, Status{Method: MethodOff, Note: "npcap: unknown method"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, st := open(log, Config{Method: tc.method}, tc.goos, tc.s)
			if st != tc.want {
				t.Fatalf("status\n got %+v\nwant %+v", st, tc.want)
			}
			if (b != nil) != (tc.want.Method != MethodOff) {
				t.Fatalf("backend %v with status %+v", b, st)
			}
		})
	}
}

func TestDarwinVirtual(t *testing.T) {
	for name, want := range map[string]bool{
		"en0": false, "en7": false, "utun3": true, "bridge100": true, "awdl0": true,
		"llw0": true, "ap1": true, "anpi0": true, "vmenet0": true, "lo0": true, "ipsec0": true, "gif0": true,
	} {
		if got := darwinVirtual(name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}
