package attr

import (
	"errors"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procNames names the PIDs of the socket tables (sockets_windows.go):
// the base name of the process image ("chrome.exe"), cached by PID and
// creation time, so a reused PID is named again and a known one costs
// OpenProcess and GetProcessTimes, not the image path. An agent that is
// not elevated cannot open other users' and services' processes; their
// names come from one Toolhelp process snapshot per lookup (it lists
// every process's image name without opening any).
type procNames struct {
	cache map[uint32]procName
	// snap is the Toolhelp snapshot of the current lookup; nil until a
	// process refuses to be opened.
	snap map[uint32]string
}

type procName struct {
	created windows.Filetime
	name    string
}

// stillActive is GetExitCodeProcess's code of a running process.
const stillActive = 259

func newProcNames() *procNames { return &procNames{cache: map[uint32]procName{}} }

// begin starts a lookup over entries: PIDs no longer in the tables are
// forgotten, and the Toolhelp snapshot of the previous lookup dropped.
func (p *procNames) begin(entries []sockEntry) {
	live := make(map[uint32]bool, len(entries))
	for _, e := range entries {
		live[e.pid] = true
	}
	for pid := range p.cache {
		if !live[pid] {
			delete(p.cache, pid)
		}
	}
	p.snap = nil
}

// name is pid's image base name; false when the process is gone.
func (p *procNames) name(pid uint32) (string, bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return p.snapshotName(pid)
	}
	if err != nil {
		return "", false // ERROR_INVALID_PARAMETER: no such process
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil || code != stillActive {
		return "", false // exited; the handle only keeps its record
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return "", false
	}
	if c, ok := p.cache[pid]; ok && c.created == created {
		return c.name, true
	}
	n := imageBase(h)
	if n == "" {
		// Minimal processes (Registry, Memory Compression) have no
		// image path; Toolhelp still names them.
		return p.snapshotName(pid)
	}
	p.cache[pid] = procName{created, n}
	return n, true
}

// snapshotName reads pid's name from this lookup's Toolhelp snapshot.
func (p *procNames) snapshotName(pid uint32) (string, bool) {
	if p.snap == nil {
		p.snap = toolhelpNames()
	}
	n, ok := p.snap[pid]
	return n, ok && n != ""
}

// toolhelpNames lists every process's image name; empty on failure.
func toolhelpNames() map[uint32]string {
	out := map[uint32]string{}
	h, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return out
	}
	defer windows.CloseHandle(h)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(h, &e); err == nil; err = windows.Process32Next(h, &e) {
		out[e.ProcessID] = windows.UTF16ToString(e.ExeFile[:])
	}
	return out
}

// imageName is the base name of pid's executable ("chrome.exe"), "" when
// it cannot be read (the ETW backend's names).
func imageName(pid uint32) string {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return ""
	}
	defer windows.CloseHandle(h)
	return imageBase(h)
}

// imageBase is the base name of the image of the process h.
func imageBase(h windows.Handle) string {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return ""
	}
	p := windows.UTF16ToString(buf[:n])
	return p[strings.LastIndexByte(p, '\\')+1:]
}
