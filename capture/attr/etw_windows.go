package attr

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The ETW backend's real-time trace session "netmon-agent" on the
// Microsoft-Windows-Kernel-Network provider, over advapi32 directly
// (etw_layout.go says why no library). It needs an elevated agent
// (Administrators, or the Performance Log Users group). Compile-checked
// only (`make cross`): no Windows host runs it; its structures' layout
// and its event decoding are tested on Linux.

var (
	advapi32           = windows.NewLazySystemDLL("advapi32.dll")
	procStartTraceW    = advapi32.NewProc("StartTraceW")
	procControlTraceW  = advapi32.NewProc("ControlTraceW")
	procEnableTraceEx2 = advapi32.NewProc("EnableTraceEx2")
	procOpenTraceW     = advapi32.NewProc("OpenTraceW")
	procProcessTrace   = advapi32.NewProc("ProcessTrace")
	procCloseTrace     = advapi32.NewProc("CloseTrace")
)

const (
	eventTraceControlStop          = 1
	eventControlCodeEnableProvider = 1
	traceLevelVerbose              = 5
	// The provider's keywords KERNEL_NETWORK_KEYWORD_IPV4 and _IPV6.
	kernelNetworkKeywords = 0x10 | 0x20
	invalidProcessTrace   = ^uint64(0)
	errCtxClosePending    = syscall.Errno(7007)
	// ProcessTraceMode bits (evntcons.h).
	processTraceModeRealTime    = 0x00000100
	processTraceModeEventRecord = 0x10000000
)

// etwActive is the running session's sums, read by the callback: the
// callback is one process-wide function (callbacks are a scarce
// resource), and there is at most one session per agent.
var etwActive atomic.Pointer[etwCounts]

// etwCallback is the EVENT_RECORD callback, created once.
var etwCallback = sync.OnceValue(func() uintptr {
	return syscall.NewCallback(func(rec *etwEventRecord) uintptr {
		c := etwActive.Load()
		if c == nil || rec.UserData == nil {
			return 0
		}
		if e, err := etwTraffic(&rec.Header, unsafe.Slice(rec.UserData, rec.UserDataLength)); err == nil {
			c.add(e)
		}
		return 0
	})
})

// etwBackend is the running session.
type etwBackend struct {
	log     *slog.Logger
	cfg     Config
	name    *uint16
	props   *etwSessionProps
	logfile *etwLogfile
	session uint64
	trace   uint64
	counts  *etwCounts
	done    chan error
	stop    sync.Once
	names   namesBeside // pcap, for L7 and DNS (ETW events carry no payload)
}

// startETW starts the session, enables the provider and starts
// consuming; its errors are the attr_note of a refusal.
func startETW(log *slog.Logger, cfg Config) (Backend, error) {
	if !etwActive.CompareAndSwap(nil, &etwCounts{}) {
		return nil, errors.New("etw: a session already runs in this agent")
	}
	b, err := openETW(log, cfg)
	if err != nil {
		etwActive.Store(nil)
		return nil, err
	}
	b.names = startNamesBeside(log, cfg, MethodETW)
	return b, nil
}

func openETW(log *slog.Logger, cfg Config) (*etwBackend, error) {
	b := &etwBackend{log: log, cfg: cfg, counts: etwActive.Load(), done: make(chan error, 1)}
	b.name, _ = windows.UTF16PtrFromString(etwSessionName)
	b.props = newETWSessionProps(etwSessionName)
	err := startTrace(&b.session, b.name, b.props)
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		// Left by an agent that did not stop it (a crash): real-time
		// sessions outlive their process.
		_ = controlTrace(0, b.name, newETWSessionProps(etwSessionName), eventTraceControlStop)
		b.props = newETWSessionProps(etwSessionName)
		err = startTrace(&b.session, b.name, b.props)
	}
	if err != nil {
		return nil, etwRefusal("start trace session", err)
	}
	guid := kernelNetworkGUID
	r, _, _ := procEnableTraceEx2.Call(uintptr(b.session), uintptr(unsafe.Pointer(&guid)),
		eventControlCodeEnableProvider, traceLevelVerbose, kernelNetworkKeywords, 0, 0, 0)
	if r != 0 {
		b.stopSession()
		return nil, etwRefusal("enable Microsoft-Windows-Kernel-Network", syscall.Errno(r))
	}
	b.logfile = &etwLogfile{LoggerName: b.name, ProcessTraceMode: processTraceModeRealTime | processTraceModeEventRecord, EventRecordCallback: etwCallback()}
	h, _, errno := procOpenTraceW.Call(uintptr(unsafe.Pointer(b.logfile)))
	if uint64(h) == invalidProcessTrace {
		b.stopSession()
		return nil, etwRefusal("open trace", errno)
	}
	b.trace = uint64(h)
	go func() {
		// ProcessTrace delivers events on this thread until CloseTrace.
		r, _, _ := procProcessTrace.Call(uintptr(unsafe.Pointer(&b.trace)), 1, 0, 0)
		if r != 0 {
			b.done <- syscall.Errno(r)
			return
		}
		b.done <- nil
	}()
	return b, nil
}

// etwRefusal turns an advapi32 error into a note.
func etwRefusal(what string, err error) error {
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return errors.New(noteETWElevated)
	}
	return fmt.Errorf("etw: %s: %w", what, err)
}

func startTrace(h *uint64, name *uint16, p *etwSessionProps) error {
	r, _, _ := procStartTraceW.Call(uintptr(unsafe.Pointer(h)), uintptr(unsafe.Pointer(name)), uintptr(unsafe.Pointer(p)))
	if r != 0 {
		return syscall.Errno(r)
	}
	return nil
}

func controlTrace(h uint64, name *uint16, p *etwSessionProps, code uint32) error {
	r, _, _ := procControlTraceW.Call(uintptr(h), uintptr(unsafe.Pointer(name)), uintptr(unsafe.Pointer(p)), uintptr(code))
	if r != 0 {
		return syscall.Errno(r)
	}
	return nil
}

// stopSession stops the trace session (the provider is disabled with it).
func (b *etwBackend) stopSession() error {
	return controlTrace(b.session, nil, b.props, eventTraceControlStop)
}

func (b *etwBackend) Method() string { return MethodETW }
func (b *etwBackend) Iface() string  { return b.names.iface() }

// Note says why there are no L7 and DNS names ("" when the pcap beside
// reads them).
func (b *etwBackend) Note() string { return b.names.note }

// Collect reports the sums since the last call, naming each PID by its
// image ("" when the process is gone: "process gone" bytes).
func (b *etwBackend) Collect() Report {
	names := map[uint32]string{}
	r := reportFromDelta(b.counts.take(func(pid uint32) string {
		n, ok := names[pid]
		if !ok {
			n = imageName(pid)
			names[pid] = n
		}
		return n
	}), b.cfg.MaxRows)
	b.names.into(&r)
	return r
}

// Stop stops the session, closes the consumer and waits for
// ProcessTrace to return.
func (b *etwBackend) Stop() error {
	var err error
	b.stop.Do(func() {
		err = b.stopSession()
		if r, _, _ := procCloseTrace.Call(uintptr(b.trace)); r != 0 && syscall.Errno(r) != errCtxClosePending {
			err = errors.Join(err, syscall.Errno(r))
		}
		err = errors.Join(err, <-b.done, b.names.stop())
		etwActive.Store(nil)
	})
	return err
}
