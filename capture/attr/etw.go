package attr

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"sync"

	"netmon/capture/ebpf"
)

// The ETW backend's event decoding: the per-packet events of the
// Microsoft-Windows-Kernel-Network provider
// ({7DD42A49-5329-4832-8DFD-43D979153A88}), which carry the process ID,
// the payload size and both ends. Platform-independent so it is tested
// everywhere; the trace session that feeds it is Windows-only
// (etw_windows.go).

// KernelNetworkProvider is the provider's GUID.
const KernelNetworkProvider = "{7DD42A49-5329-4832-8DFD-43D979153A88}"

// etwLayout is what one event ID of the provider carries.
type etwLayout struct {
	proto uint8
	out   bool
	v6    bool
}

// etwEvents are the event IDs with traffic, from the provider's
// manifest (KERNEL_NETWORK_TASK_TCPIP and _UDPIP, Send and Recv
// opcodes); connect, accept, disconnect and retransmit events carry no
// new payload and are not counted.
var etwEvents = map[uint16]etwLayout{
	10: {protoTCP, true, false}, 11: {protoTCP, false, false},
	26: {protoTCP, true, true}, 27: {protoTCP, false, true},
	42: {protoUDP, true, false}, 43: {protoUDP, false, false},
	58: {protoUDP, true, true}, 59: {protoUDP, false, true},
}

// etwNet is one decoded traffic event.
type etwNet struct {
	PID           uint32
	Size          uint32
	Proto         uint8
	Out           bool
	Local, Remote netip.AddrPort
}

var (
	errETWNotTraffic = errors.New("etw: not a traffic event")
	errETWShort      = errors.New("etw: event data shorter than its template")
)

// decodeETWNet decodes the user data of event id. Every traffic
// template starts PID (UInt32), size (UInt32), daddr, saddr (4 or 16
// bytes, network order), dport, sport (UInt16, network order, the
// manifest's win:Port); the fields after them (times, sequence number,
// connection ID) are not needed. daddr is the remote end for sends and
// receives alike.
func decodeETWNet(id uint16, data []byte) (etwNet, error) {
	l, ok := etwEvents[id]
	if !ok {
		return etwNet{}, errETWNotTraffic
	}
	alen := 4
	if l.v6 {
		alen = 16
	}
	if len(data) < 8+2*alen+4 {
		return etwNet{}, errETWShort
	}
	e := etwNet{PID: binary.LittleEndian.Uint32(data), Size: binary.LittleEndian.Uint32(data[4:]), Proto: l.proto, Out: l.out}
	addr := func(b []byte) netip.Addr {
		if l.v6 {
			return netip.AddrFrom16([16]byte(b)).Unmap()
		}
		return netip.AddrFrom4([4]byte(b))
	}
	remote, local := addr(data[8:8+alen]), addr(data[8+alen:8+2*alen])
	p := data[8+2*alen:]
	e.Remote = netip.AddrPortFrom(remote, binary.BigEndian.Uint16(p))
	e.Local = netip.AddrPortFrom(local, binary.BigEndian.Uint16(p[2:]))
	return e, nil
}

// etwCounts sums decoded events per process and socket between two
// reports, in the capture/ebpf Delta shape so reportFromDelta shapes
// both backends' rows the same way. The session's callback adds; the
// telemetry loop takes.
type etwCounts struct {
	mu    sync.Mutex
	flows map[etwKey]*ebpf.Counters
}

type etwKey struct {
	pid           uint32
	proto         uint8
	local, remote netip.AddrPort
}

func (c *etwCounts) add(e etwNet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flows == nil {
		c.flows = map[etwKey]*ebpf.Counters{}
	}
	k := etwKey{e.PID, e.Proto, e.Local, e.Remote}
	v := c.flows[k]
	if v == nil {
		v = &ebpf.Counters{}
		c.flows[k] = v
	}
	if e.Out {
		v.BytesOut += uint64(e.Size)
		v.CallsOut++
	} else {
		v.BytesIn += uint64(e.Size)
		v.CallsIn++
	}
}

// take returns the sums since the last take, naming each process with
// name (the PID's image name; "" when it is gone).
func (c *etwCounts) take(name func(pid uint32) string) ebpf.Delta {
	c.mu.Lock()
	flows := c.flows
	c.flows = nil
	c.mu.Unlock()
	var d ebpf.Delta
	for k, v := range flows {
		if k.pid == 0 || k.pid == 4 { // Idle and System: the kernel's own sockets
			d.Kernel.BytesIn, d.Kernel.BytesOut = d.Kernel.BytesIn+v.BytesIn, d.Kernel.BytesOut+v.BytesOut
			d.Kernel.CallsIn, d.Kernel.CallsOut = d.Kernel.CallsIn+v.CallsIn, d.Kernel.CallsOut+v.CallsOut
			continue
		}
		d.Flows = append(d.Flows, ebpf.Flow{PID: int32(k.pid), Comm: name(k.pid), Proto: k.proto, Local: k.local, Remote: k.remote, Counters: *v})
	}
	return d
}
