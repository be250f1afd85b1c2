package attr

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"netmon/agentmode/wire"
)

// procSockets maps sockets to processes from Linux's /proc, incrementally:
// the kernel's socket tables (sock_diag netlink, or /proc/net/{tcp,udp}{,6};
// cheap, read whole) give each socket's inode; which process holds an inode is only known by
// reading the /proc/<pid>/fd links of processes, which is the costly part.
// So the inode -> pid map is kept between reads, and a read looks only for
// the inodes it does not know yet, in the processes it has not seen yet
// first (a new socket usually belongs to a new process), then in the
// others, and stops as soon as every unknown inode is found.
//
// capture/proc (gopsutil) reads every process's descriptors on each call,
// which takes tens of milliseconds on a busy host: too slow to find the
// socket of a process that lives for a fraction of a second.
type procSockets struct {
	root   string           // "/proc"
	netns  string           // our network namespace ("net:[4026531840]")
	budget time.Duration    // longest descriptor scan of one lookup
	inodes map[uint64]int32 // socket inode -> pid, for live sockets
	// seen: pids whose namespace was checked; true when it is ours (only
	// those can hold the sockets of our tables, fd passing aside).
	seen map[int32]bool
	// foreign: when a process was first found in another namespace; it
	// is checked again for moveWindow, since `ip netns exec` and
	// container runtimes move a process just after it starts.
	foreign map[int32]time.Time
	names   map[int32]string // pid -> comm
}

// scanBudget bounds one lookup's descriptor scan; what it did not reach is
// looked for at the next lookup.
const scanBudget = 50 * time.Millisecond

// moveWindow: see procSockets.foreign.
const moveWindow = 2 * time.Second

func newProcSockets() *procSockets {
	ns, _ := os.Readlink("/proc/self/ns/net")
	return &procSockets{root: "/proc", netns: ns, budget: scanBudget, inodes: map[uint64]int32{}, seen: map[int32]bool{}, foreign: map[int32]time.Time{}, names: map[int32]string{}}
}

// tcpListen is the LISTEN state of /proc/net/tcp
// (include/net/tcp_states.h).
const tcpListen = 10

// lookup reads the socket tables of the agent's network namespace once
// and returns the owners of the sockets of keys, reading process
// descriptors only for sockets of keys whose holder is not known yet.
func (s *procSockets) lookup(keys []flowKey) (func(flowKey) (owner, bool), error) {
	entries, err := diagSockets()
	if err != nil {
		// A kernel without inet_diag: the /proc tables say the same,
		// less reliably under churn.
		entries, err = procSockTables(s.root)
		if err != nil {
			return nil, err
		}
	}
	live := make(map[uint64]bool, len(entries))
	for _, e := range entries {
		live[e.inode] = true
	}
	ix := newEntryIndex(entries, tcpListen)
	for ino := range s.inodes {
		if !live[ino] {
			delete(s.inodes, ino)
		}
	}
	want := map[uint64]bool{}
	for _, k := range keys {
		for _, e := range ix.candidates(k) {
			if _, known := s.inodes[e.inode]; !known && e.inode != 0 {
				want[e.inode] = true
			}
		}
	}
	complete := true
	if len(want) > 0 {
		complete = s.scan(want)
	}
	return func(k flowKey) (owner, bool) {
		cands := ix.candidates(k)
		if len(cands) == 0 {
			return owner{}, false
		}
		// The connected socket's holder; else the listener's, for a
		// connection still in its accept queue (held by no descriptor
		// yet, but by the server that will accept it).
		for _, e := range cands {
			if _, known := s.inodes[e.inode]; known {
				return s.ownerOf(e), true
			}
		}
		if !complete && cands[0].inode != 0 {
			return owner{}, false // not searched everywhere yet: retry
		}
		return s.ownerOf(cands[0]), true
	}, nil
}

func (s *procSockets) ownerOf(e sockEntry) owner {
	if e.inode == 0 {
		// TIME_WAIT and other sockets the process has let go of.
		return owner{reason: wire.ReasonProcessGone}
	}
	pid, ok := s.inodes[e.inode]
	if !ok {
		// No process held it when the descriptors were read: its
		// process exited in between (far more common for the traffic
		// of a desktop or server than a kernel-owned socket, which
		// cannot be told apart from here).
		return owner{reason: wire.ReasonProcessGone}
	}
	name, ok := s.names[pid]
	if !ok {
		b, err := os.ReadFile(s.root + "/" + strconv.Itoa(int(pid)) + "/comm")
		if err != nil {
			return owner{reason: wire.ReasonProcessGone}
		}
		name = strings.TrimSuffix(string(b), "\n")
		s.names[pid] = name
	}
	return owner{pid: pid, name: name}
}

// scan reads process descriptors until every inode of want is found: the
// processes not seen before first (newest first), then the others, only
// those of our network namespace, within the time budget. It reports
// whether it searched every process.
func (s *procSockets) scan(want map[uint64]bool) bool {
	d, err := os.ReadDir(s.root)
	if err != nil {
		return false
	}
	now := time.Now()
	var fresh, old []int32
	alive := make(map[int32]bool, len(d))
	for _, e := range d {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		alive[int32(pid)] = true
		ours, seen := s.seen[int32(pid)]
		switch {
		case !seen:
			fresh = append(fresh, int32(pid))
		case ours:
			old = append(old, int32(pid))
		case now.Sub(s.foreign[int32(pid)]) < moveWindow:
			delete(s.seen, int32(pid)) // look again: it may have moved in
			fresh = append(fresh, int32(pid))
		}
	}
	for pid := range s.seen {
		if !alive[pid] {
			delete(s.seen, pid)
			delete(s.names, pid)
		}
	}
	for pid := range s.foreign {
		if !alive[pid] {
			delete(s.foreign, pid)
		}
	}
	slices.Sort(fresh)
	slices.Reverse(fresh)
	slices.Sort(old)
	slices.Reverse(old)
	deadline := now.Add(s.budget)
	for i, pid := range append(fresh, old...) {
		if len(want) == 0 {
			return true
		}
		if i%16 == 15 && time.Now().After(deadline) {
			return false
		}
		if _, seen := s.seen[pid]; !seen {
			ns, err := os.Readlink(s.root + "/" + strconv.Itoa(int(pid)) + "/ns/net")
			s.seen[pid] = err == nil && ns == s.netns
			if _, ok := s.foreign[pid]; !ok && !s.seen[pid] {
				s.foreign[pid] = now
			}
			if s.seen[pid] {
				delete(s.names, pid) // it may have exec'd since its name was read
			}
		}
		if s.seen[pid] {
			s.readFDs(pid, want)
		}
	}
	return true
}

// readFDs records the sockets process pid holds, removing found ones from
// want.
func (s *procSockets) readFDs(pid int32, want map[uint64]bool) {
	dir := s.root + "/" + strconv.Itoa(int(pid)) + "/fd"
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	for _, n := range names {
		link, err := os.Readlink(dir + "/" + n)
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		ino, err := strconv.ParseUint(link[len("socket:["):len(link)-1], 10, 64)
		if err != nil {
			continue
		}
		s.inodes[ino] = pid
		delete(want, ino)
	}
}

// procSockTables reads /proc/net/{tcp,udp}{,6}.
func procSockTables(root string) ([]sockEntry, error) {
	var entries []sockEntry
	for _, t := range [...]struct {
		file  string
		proto uint8
	}{{"net/tcp", protoTCP}, {"net/tcp6", protoTCP}, {"net/udp", protoUDP}, {"net/udp6", protoUDP}} {
		var err error
		entries, err = readSockTable(root+"/"+t.file, t.proto, entries)
		if err != nil && !os.IsNotExist(err) { // no IPv6: no tcp6
			return nil, err
		}
	}
	return entries, nil
}

// readSockTable appends the entries of one /proc/net socket table.
func readSockTable(path string, proto uint8, out []sockEntry) ([]sockEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		if first { // the header line
			first = false
			continue
		}
		if e, ok := parseSockLine(sc.Bytes(), proto); ok {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}

// parseSockLine parses "sl local rem st tx:rx tr:when retr uid timeout
// inode ..." with addresses as hex words in host byte order.
func parseSockLine(line []byte, proto uint8) (sockEntry, bool) {
	f := bytes.Fields(line)
	if len(f) < 10 {
		return sockEntry{}, false
	}
	local, ok1 := parseHexAddr(f[1])
	remote, ok2 := parseHexAddr(f[2])
	st, err1 := strconv.ParseUint(string(f[3]), 16, 8)
	ino, err2 := strconv.ParseUint(string(f[9]), 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return sockEntry{}, false
	}
	return sockEntry{proto: proto, local: local, remote: remote, state: int(st), inode: ino}, true
}

// parseHexAddr parses "0100007F:1F90" (IPv4) or the 32-hex-digit IPv6
// form: 32-bit words in the kernel's (little-endian here) byte order.
func parseHexAddr(b []byte) (netip.AddrPort, bool) {
	i := bytes.IndexByte(b, ':')
	if i < 0 {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(string(b[i+1:]), 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	var raw [16]byte
	n, err := hex.Decode(raw[:], b[:i])
	if err != nil || (n != 4 && n != 16) {
		return netip.AddrPort{}, false
	}
	for w := 0; w < n; w += 4 {
		binary.BigEndian.PutUint32(raw[w:], binary.NativeEndian.Uint32(raw[w:]))
	}
	var a netip.Addr
	if n == 4 {
		a = netip.AddrFrom4([4]byte(raw[:4]))
	} else {
		a = netip.AddrFrom16(raw).Unmap()
	}
	return netip.AddrPortFrom(a, uint16(port)), true
}
