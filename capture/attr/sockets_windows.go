package attr

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// winSockets maps flows to processes from the Windows socket tables:
// GetExtendedTcpTable (TCP_TABLE_OWNER_PID_ALL) and GetExtendedUdpTable
// (UDP_TABLE_OWNER_PID), IPv4 and IPv6, which give each socket's owning
// PID directly, so one read is complete (no descriptor scan as on
// Linux). golang.org/x/sys/windows does not wrap them; they are called
// through iphlpapi.dll, and their bytes parsed in sockets_wintable.go.
// Read by pcapBackend.resolve when new flows wait for an owner, at most
// every LookupEvery, never per packet.
type winSockets struct {
	bufs  [4][]byte // one per winTable, kept between reads
	names *procNames
}

var (
	iphlpapi                = windows.NewLazySystemDLL("iphlpapi.dll")
	procGetExtendedTcpTable = iphlpapi.NewProc("GetExtendedTcpTable")
	procGetExtendedUdpTable = iphlpapi.NewProc("GetExtendedUdpTable")
)

// TCP_TABLE_CLASS and UDP_TABLE_CLASS values (iprtrmib.h).
const (
	tcpTableOwnerPIDAll = 5
	udpTableOwnerPID    = 1
)

func newWinSockets() *winSockets { return &winSockets{names: newProcNames()} }

// lookup reads the four tables once and names the owners of keys.
func (s *winSockets) lookup(keys []flowKey) (func(flowKey) (owner, bool), error) {
	var entries []sockEntry
	for _, t := range [...]struct {
		kind winTable
		proc *windows.LazyProc
		af   uint32
		cls  uint32
	}{
		{winTCP4, procGetExtendedTcpTable, windows.AF_INET, tcpTableOwnerPIDAll},
		{winTCP6, procGetExtendedTcpTable, windows.AF_INET6, tcpTableOwnerPIDAll},
		{winUDP4, procGetExtendedUdpTable, windows.AF_INET, udpTableOwnerPID},
		{winUDP6, procGetExtendedUdpTable, windows.AF_INET6, udpTableOwnerPID},
	} {
		b, err := readWinTable(t.proc, s.bufs[t.kind], t.af, t.cls)
		if errors.Is(err, windows.ERROR_NOT_SUPPORTED) && t.af == windows.AF_INET6 {
			continue // no IPv6 stack
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", t.kind, err)
		}
		s.bufs[t.kind] = b
		if entries, err = parseWinTable(t.kind, b, entries); err != nil {
			return nil, err
		}
	}
	s.names.begin(entries)
	return winMatch(entries, keys, s.names.name), nil
}

// readWinTable calls proc into buf, growing it while the table does not
// fit (it may grow between the calls). The table is at the start of the
// returned buffer; its count says how much of it is rows.
func readWinTable(proc *windows.LazyProc, buf []byte, af, cls uint32) ([]byte, error) {
	if err := proc.Find(); err != nil {
		return nil, err
	}
	if len(buf) == 0 {
		buf = make([]byte, 16<<10)
	}
	for range 8 {
		size := uint32(len(buf))
		// bOrder FALSE: sorting costs the kernel time and is not needed.
		r, _, _ := proc.Call(uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&size)), 0, uintptr(af), uintptr(cls), 0)
		switch syscall.Errno(r) {
		case 0:
			return buf, nil
		case windows.ERROR_INSUFFICIENT_BUFFER:
			buf = make([]byte, int(size)+int(size)/4)
		default:
			return nil, syscall.Errno(r)
		}
	}
	return nil, errors.New("table kept growing past the buffer")
}
