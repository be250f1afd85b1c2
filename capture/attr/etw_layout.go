package attr

import (
	"encoding/hex"
	"errors"
	"strings"
	"unicode/utf16"
	"unsafe"
)

// The Windows structures the ETW trace session (etw_windows.go) hands
// to advapi32, declared here without build tags so their layout and
// contents are tested on Linux (etw_layout_test.go pins the x64 offsets
// of the Windows SDK headers evntrace.h, evntcons.h and wmistr.h).
// They are built by hand on golang.org/x/sys/windows: the maintained
// pure-Go ETW libraries were refused by the module proxy, and the one
// version it served (0xrawsec/golang-etw v1.6.2) is GPL-3.0, which this
// Apache-2.0 binary cannot link.

// etwGUID is a Windows GUID.
type etwGUID struct {
	Data1        uint32
	Data2, Data3 uint16
	Data4        [8]byte
}

// parseETWGUID reads "{XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}".
func parseETWGUID(s string) (etwGUID, error) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return etwGUID{}, errors.New("etw: malformed GUID")
	}
	b, err := hex.DecodeString(s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:])
	if err != nil {
		return etwGUID{}, errors.New("etw: malformed GUID")
	}
	g := etwGUID{
		Data1: uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]),
		Data2: uint16(b[4])<<8 | uint16(b[5]), Data3: uint16(b[6])<<8 | uint16(b[7]),
	}
	copy(g.Data4[:], b[8:])
	return g, nil
}

// kernelNetworkGUID is KernelNetworkProvider parsed.
var kernelNetworkGUID = func() etwGUID {
	g, err := parseETWGUID(KernelNetworkProvider)
	if err != nil {
		panic(err)
	}
	return g
}()

// etwWnodeHeader is WNODE_HEADER (48 bytes on x64).
type etwWnodeHeader struct {
	BufferSize        uint32
	ProviderID        uint32
	HistoricalContext uint64
	TimeStamp         int64 // union with CountLost and KernelHandle
	GUID              etwGUID
	ClientContext     uint32
	Flags             uint32
}

// etwTraceProperties is EVENT_TRACE_PROPERTIES (120 bytes on x64).
type etwTraceProperties struct {
	Wnode               etwWnodeHeader
	BufferSize          uint32
	MinimumBuffers      uint32
	MaximumBuffers      uint32
	MaximumFileSize     uint32
	LogFileMode         uint32
	FlushTimer          uint32
	EnableFlags         uint32
	AgeLimit            int32
	NumberOfBuffers     uint32
	FreeBuffers         uint32
	EventsLost          uint32
	BuffersWritten      uint32
	LogBuffersLost      uint32
	RealTimeBuffersLost uint32
	LoggerThreadID      uintptr // HANDLE
	LogFileNameOffset   uint32
	LoggerNameOffset    uint32
}

// etwSessionProps is the buffer StartTraceW and ControlTraceW take: the
// properties followed by room for the session name, which the system
// writes at LoggerNameOffset (a real-time session has no log file).
type etwSessionProps struct {
	etwTraceProperties
	LoggerName [1024]uint16
}

// Values of the session (evntrace.h, wmistr.h).
const (
	etwSessionName         = "netmon-agent"
	wnodeFlagTracedGUID    = 0x00020000
	etwClockQPC            = 1 // ClientContext: QueryPerformanceCounter timestamps
	eventTraceRealTimeMode = 0x00000100
	etwBufferKB            = 64 // per buffer; the system picks how many
	etwFlushSeconds        = 1  // deliver partly filled buffers every second
)

// newETWSessionProps fills the session's properties for a real-time
// session called name.
func newETWSessionProps(name string) *etwSessionProps {
	p := &etwSessionProps{}
	p.Wnode.BufferSize = uint32(unsafe.Sizeof(*p))
	p.Wnode.Flags = wnodeFlagTracedGUID
	p.Wnode.ClientContext = etwClockQPC
	p.BufferSize = etwBufferKB
	p.LogFileMode = eventTraceRealTimeMode
	p.FlushTimer = etwFlushSeconds
	p.LoggerNameOffset = uint32(unsafe.Sizeof(p.etwTraceProperties))
	copy(p.LoggerName[:len(p.LoggerName)-1], utf16.Encode([]rune(name)))
	return p
}

// etwEventHeader is EVENT_HEADER (80 bytes on x64), its
// EVENT_DESCRIPTOR inlined (ID to Keyword).
type etwEventHeader struct {
	Size          uint16
	HeaderType    uint16
	Flags         uint16
	EventProperty uint16
	ThreadID      uint32
	ProcessID     uint32
	TimeStamp     int64
	ProviderID    etwGUID
	ID            uint16
	Version       uint8
	Channel       uint8
	Level         uint8
	Opcode        uint8
	Task          uint16
	Keyword       uint64
	ProcessorTime uint64
	ActivityID    etwGUID
}

// etwEventRecord is EVENT_RECORD (112 bytes on x64). UserData is a
// pointer into the system's buffer, valid during the callback only.
type etwEventRecord struct {
	Header            etwEventHeader
	BufferContext     uint32
	ExtendedDataCount uint16
	UserDataLength    uint16
	ExtendedData      uintptr
	UserData          *byte
	UserContext       uintptr
}

// etwLogfile is EVENT_TRACE_LOGFILEW (448 bytes on x64), with the
// members a real-time consumer does not read kept opaque:
// CurrentEvent (EVENT_TRACE, 88 bytes) and LogfileHeader
// (TRACE_LOGFILE_HEADER, 280 bytes).
type etwLogfile struct {
	LogFileName         *uint16
	LoggerName          *uint16
	CurrentTime         int64
	BuffersRead         uint32
	ProcessTraceMode    uint32
	CurrentEvent        [88]byte
	LogfileHeader       [280]byte
	BufferCallback      uintptr
	BufferSize          uint32
	Filled              uint32
	EventsLost          uint32
	EventRecordCallback uintptr
	IsKernelTrace       uint32
	Context             uintptr
}

// etwTraffic decodes one event record's user data when it is a traffic
// event of the kernel network provider; the session enables only that
// provider, but the system also delivers its own events (lost-event
// notices, the trace header) through the same callback.
func etwTraffic(h *etwEventHeader, data []byte) (etwNet, error) {
	if h.ProviderID != kernelNetworkGUID {
		return etwNet{}, errETWNotTraffic
	}
	return decodeETWNet(h.ID, data)
}
