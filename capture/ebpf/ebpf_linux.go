package ebpf

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	cebpf "github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

// Accountant is the loaded and attached programs and the reader of their
// maps. Read is called from one goroutine.
type Accountant struct {
	objs  attrObjects
	links []link.Link
	prev  map[attrFlowKey]*seen
	slots map[uint32]*slotState
	// Read's buffers for the slot arrays.
	descs []attrSlotDesc
	cnts  []attrSlotCnt
	lost  [2]Counters
}

type seen struct {
	c    Counters
	flow Flow // the socket and process, from the entry's creation
	idle int
}

// Start checks what the kernel offers, loads the programs and attaches
// them. Its error says exactly what is missing, prefixed "ebpf: ", for
// the agent's attr_note.
func Start() (*Accountant, error) {
	kspec, err := btf.LoadKernelSpec()
	if err != nil {
		if errors.Is(err, cebpf.ErrNotSupported) || errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("ebpf: kernel %s has no BTF (no /sys/kernel/btf/vmlinux: built without CONFIG_DEBUG_INFO_BTF)", release())
		}
		return nil, fmt.Errorf("ebpf: reading the kernel's BTF: %v", err)
	}
	for _, tp := range []string{"sock_send_length", "sock_recv_length"} {
		var td *btf.Typedef
		if kspec.TypeByName("btf_trace_"+tp, &td) != nil {
			return nil, fmt.Errorf("ebpf: kernel %s has no sock:%s tracepoint (needs 6.3 or later)", release(), tp)
		}
	}
	// Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK.
	if err := rlimit.RemoveMemlock(); err != nil && !errors.Is(err, unix.EPERM) {
		return nil, fmt.Errorf("ebpf: raising RLIMIT_MEMLOCK: %v", err)
	}
	// Without privilege the socket storage map is refused with EINVAL
	// (no BTF for the unprivileged), which says nothing: ask the kernel
	// for a plain array first, refused with EPERM.
	probe, err := cebpf.NewMap(&cebpf.MapSpec{Type: cebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, errors.New("ebpf: needs CAP_BPF and CAP_PERFMON, or root")
		}
		return nil, fmt.Errorf("ebpf: creating a map: %v", err)
	}
	_ = probe.Close()
	a := &Accountant{prev: map[attrFlowKey]*seen{}}
	if err := loadAttrObjects(&a.objs, &cebpf.CollectionOptions{Programs: cebpf.ProgramOptions{KernelTypes: kspec}}); err != nil {
		return nil, loadError(err)
	}
	if err := a.fillFreeSlots(); err != nil {
		_ = a.Close()
		return nil, err
	}
	for _, p := range []*cebpf.Program{a.objs.TaskExit, a.objs.SockSend, a.objs.SockRecv} {
		l, err := link.AttachTracing(link.TracingOptions{Program: p})
		if err != nil {
			_ = a.Close()
			if errors.Is(err, unix.EPERM) {
				return nil, errors.New("ebpf: needs CAP_BPF and CAP_PERFMON, or root")
			}
			return nil, fmt.Errorf("ebpf: attaching %s: %v", p, err)
		}
		a.links = append(a.links, l)
	}
	return a, nil
}

// loadError turns a refused program load into the attr_note's words. The
// verifier refuses a program it cannot prove safe with EACCES, the same
// errno as a missing capability, so the errno alone misleads: a
// rejection that comes with a verifier log is the verifier's, and its
// last line says why; EPERM or EACCES without a log is privilege.
func loadError(err error) error {
	var ve *cebpf.VerifierError
	if errors.As(err, &ve) && len(ve.Log) > 0 && !errors.Is(err, unix.EPERM) {
		// The whole verifier log is long: only on request, for
		// whoever edits attr.bpf.c.
		if os.Getenv("NETMON_EBPF_DEBUG") != "" {
			fmt.Fprintf(os.Stderr, "%+v\n", ve)
		}
		return fmt.Errorf("ebpf: kernel %s refused the programs: %s", release(), lastLine(ve))
	}
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return errors.New("ebpf: needs CAP_BPF and CAP_PERFMON, or root")
	}
	return fmt.Errorf("ebpf: loading the programs: %v", err)
}

// Read returns what was counted since the previous Read (or Start), and
// deletes kernel entries idle for idleReads reads.
func (a *Accountant) Read() (Delta, error) {
	var d Delta
	var k attrFlowKey
	var vals []attrFlowVal
	live := make(map[attrFlowKey]bool, len(a.prev))
	it := a.objs.Flows.Iterate()
	for it.Next(&k, &vals) {
		c, first := sum(vals)
		live[k] = true
		s := a.prev[k]
		if s == nil {
			s = &seen{}
			a.prev[k] = s
		}
		if first != nil {
			s.flow = flowOf(k.Pid, first)
		}
		delta := c.sub(s.c)
		s.c = c
		if delta.Zero() || s.flow.Comm == "" && s.flow.Proto == 0 {
			s.idle++
			continue
		}
		s.idle = 0
		f := s.flow
		f.Counters = delta
		d.Flows = append(d.Flows, f)
	}
	if err := it.Err(); err != nil {
		return d, fmt.Errorf("ebpf: reading the flows map: %w", err)
	}
	if err := a.readSlots(&d); err != nil {
		return d, err
	}
	for key, s := range a.prev {
		switch {
		case !live[key]:
			delete(a.prev, key)
		case s.idle >= idleReads:
			if err := a.objs.Flows.Delete(key); err == nil || errors.Is(err, cebpf.ErrKeyNotExist) {
				delete(a.prev, key)
			}
		}
	}
	for i := range a.lost {
		if err := a.objs.Lost.Lookup(uint32(i), &vals); err != nil {
			return d, fmt.Errorf("ebpf: reading the lost map: %w", err)
		}
		c, _ := sum(vals)
		delta := c.sub(a.lost[i])
		a.lost[i] = c
		if i == 0 {
			d.Kernel = delta
		} else {
			d.MapFull = delta
		}
	}
	return d, nil
}

// sum adds the per-CPU counters and returns the slot that holds the
// socket's description (the CPU that created the entry), nil if none.
func sum(vals []attrFlowVal) (Counters, *attrFlowVal) {
	var c Counters
	var first *attrFlowVal
	for i := range vals {
		v := &vals[i]
		c.BytesIn += v.BytesIn
		c.BytesOut += v.BytesOut
		c.CallsIn += v.CallsIn
		c.CallsOut += v.CallsOut
		if v.Family != 0 {
			first = v
		}
	}
	return c, first
}

// flowOf converts the kernel's description of a socket.
func flowOf(pid uint32, v *attrFlowVal) Flow {
	f := Flow{PID: int32(pid), Proto: v.Proto}
	var comm strings.Builder
	for _, ch := range v.Comm {
		if ch == 0 {
			break
		}
		comm.WriteByte(byte(ch))
	}
	f.Comm = comm.String()
	var local, remote netip.Addr
	if v.Family == unix.AF_INET {
		local, remote = netip.AddrFrom4([4]byte(v.Local[:4])), netip.AddrFrom4([4]byte(v.Remote[:4]))
	} else {
		local, remote = netip.AddrFrom16(v.Local).Unmap(), netip.AddrFrom16(v.Remote).Unmap()
	}
	f.Local, f.Remote = netip.AddrPortFrom(local, v.Lport), netip.AddrPortFrom(remote, v.Rport)
	return f
}

// Stats returns the programs' run statistics, sock_send then sock_recv
// (zero unless
// kernel.bpf_stats_enabled is on, see EnableStats).
func (a *Accountant) Stats() ([]ProgStats, error) {
	var out []ProgStats
	for _, np := range []struct {
		name string
		p    *cebpf.Program
	}{{"sock_send", a.objs.SockSend}, {"sock_recv", a.objs.SockRecv}, {"task_exit", a.objs.TaskExit}} {
		name := np.name
		st, err := np.p.Stats()
		if err != nil {
			return nil, err
		}
		out = append(out, ProgStats{Name: name, RunTime: st.Runtime, RunCount: st.RunCount})
	}
	return out, nil
}

// EnableStats turns the kernel's BPF run statistics on until the closer
// is closed (the same switch as sysctl kernel.bpf_stats_enabled=1).
func EnableStats() (io.Closer, error) {
	return cebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
}

// Close detaches and unloads the programs.
func (a *Accountant) Close() error {
	var errs []error
	for _, l := range a.links {
		errs = append(errs, l.Close())
	}
	a.links = nil
	errs = append(errs, a.objs.Close())
	return errors.Join(errs...)
}

func release() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "(unknown release)"
	}
	return unix.ByteSliceToString(u.Release[:])
}

func lastLine(err error) string {
	s := strings.TrimSpace(fmt.Sprintf("%v", err))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
