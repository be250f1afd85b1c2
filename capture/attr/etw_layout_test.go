//go:build amd64 || arm64

package attr

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf16"
	"unsafe"
)

// The x64 sizes and offsets of the Windows SDK structures (evntrace.h,
// evntcons.h, wmistr.h): a wrong one would make StartTraceW or
// OpenTraceW read garbage on the only system that runs them, where no
// test runs.
func TestETWLayout(t *testing.T) {
	var p etwTraceProperties
	var h etwEventHeader
	var r etwEventRecord
	var l etwLogfile
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(WNODE_HEADER)", unsafe.Sizeof(p.Wnode), 48},
		{"WNODE_HEADER.Guid", unsafe.Offsetof(p.Wnode.GUID), 24},
		{"WNODE_HEADER.Flags", unsafe.Offsetof(p.Wnode.Flags), 44},
		{"sizeof(EVENT_TRACE_PROPERTIES)", unsafe.Sizeof(p), 120},
		{"EVENT_TRACE_PROPERTIES.LogFileMode", unsafe.Offsetof(p.LogFileMode), 64},
		{"EVENT_TRACE_PROPERTIES.FlushTimer", unsafe.Offsetof(p.FlushTimer), 68},
		{"EVENT_TRACE_PROPERTIES.LoggerThreadId", unsafe.Offsetof(p.LoggerThreadID), 104},
		{"EVENT_TRACE_PROPERTIES.LoggerNameOffset", unsafe.Offsetof(p.LoggerNameOffset), 116},
		{"sizeof(EVENT_HEADER)", unsafe.Sizeof(h), 80},
		{"EVENT_HEADER.ProviderId", unsafe.Offsetof(h.ProviderID), 24},
		{"EVENT_HEADER.EventDescriptor.Id", unsafe.Offsetof(h.ID), 40},
		{"EVENT_HEADER.EventDescriptor.Keyword", unsafe.Offsetof(h.Keyword), 48},
		{"EVENT_HEADER.ActivityId", unsafe.Offsetof(h.ActivityID), 64},
		{"sizeof(EVENT_RECORD)", unsafe.Sizeof(r), 112},
		{"EVENT_RECORD.UserDataLength", unsafe.Offsetof(r.UserDataLength), 86},
		{"EVENT_RECORD.UserData", unsafe.Offsetof(r.UserData), 96},
		{"sizeof(EVENT_TRACE_LOGFILEW)", unsafe.Sizeof(l), 448},
		{"EVENT_TRACE_LOGFILEW.ProcessTraceMode", unsafe.Offsetof(l.ProcessTraceMode), 28},
		{"EVENT_TRACE_LOGFILEW.BufferCallback", unsafe.Offsetof(l.BufferCallback), 400},
		{"EVENT_TRACE_LOGFILEW.EventRecordCallback", unsafe.Offsetof(l.EventRecordCallback), 424},
		{"EVENT_TRACE_LOGFILEW.Context", unsafe.Offsetof(l.Context), 440},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// The session's property buffer, byte by byte where StartTraceW reads it.
func TestETWSessionProps(t *testing.T) {
	p := newETWSessionProps(etwSessionName)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
	u32 := func(off int) uint32 { return binary.LittleEndian.Uint32(raw[off:]) }
	for _, c := range []struct {
		name string
		off  int
		want uint32
	}{
		{"Wnode.BufferSize", 0, 120 + 2048},
		{"Wnode.ClientContext", 40, 1},
		{"Wnode.Flags", 44, 0x20000},
		{"BufferSize", 48, 64},
		{"LogFileMode", 64, 0x100},
		{"FlushTimer", 68, 1},
		{"LogFileNameOffset", 112, 0},
		{"LoggerNameOffset", 116, 120},
	} {
		if got := u32(c.off); got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, got, c.want)
		}
	}
	name := make([]uint16, len(etwSessionName)+1)
	for i := range name {
		name[i] = binary.LittleEndian.Uint16(raw[120+2*i:])
	}
	if got := string(utf16.Decode(name[:len(name)-1])); got != "netmon-agent" || name[len(name)-1] != 0 {
		t.Fatalf("logger name %q (terminator %d)", got, name[len(name)-1])
	}
}

func TestParseETWGUID(t *testing.T) {
	want := etwGUID{0x7DD42A49, 0x5329, 0x4832, [8]byte{0x8D, 0xFD, 0x43, 0xD9, 0x79, 0x15, 0x3A, 0x88}}
	if kernelNetworkGUID != want {
		t.Fatalf("%+v", kernelNetworkGUID)
	}
	// In memory it is the GUID's Windows byte order (Data1-3 little-endian).
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&want)), 16)
	if got := [16]byte(raw); got != [16]byte{0x49, 0x2A, 0xD4, 0x7D, 0x29, 0x53, 0x32, 0x48, 0x8D, 0xFD, 0x43, 0xD9, 0x79, 0x15, 0x3A, 0x88} {
		t.Fatalf("bytes % x", got)
	}
	for _, bad := range []string{"", "{7DD42A49-5329-4832-8DFD-43D979153A8}", "{7DD42A49-5329-4832-8DFD-43D979153A8G}", "7DD42A4953294832-8DFD-43D979153A88--"} {
		if _, err := parseETWGUID(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// An event record as the callback receives it: the provider and event
// ID in the header, the fixture as user data.
func TestETWTrafficRecord(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("../../testdata/etw", "10-tcp-send-v4.bin"))
	if err != nil {
		t.Fatal(err)
	}
	rec := etwEventRecord{Header: etwEventHeader{ProviderID: kernelNetworkGUID, ID: 10}, UserDataLength: uint16(len(raw)), UserData: &raw[0]}
	e, err := etwTraffic(&rec.Header, unsafe.Slice(rec.UserData, rec.UserDataLength))
	if err != nil || e.PID != 4242 || e.Size != 1448 || !e.Out || e.Remote.String() != "93.184.216.34:443" {
		t.Fatalf("%+v %v", e, err)
	}
	other := rec.Header
	other.ProviderID.Data1++ // e.g. the lost-event notice's provider
	if _, err := etwTraffic(&other, raw); err != errETWNotTraffic {
		t.Fatalf("other provider: %v", err)
	}
	connect := rec.Header
	connect.ID = 12
	if _, err := etwTraffic(&connect, raw); err != errETWNotTraffic {
		t.Fatalf("connect: %v", err)
	}
}
