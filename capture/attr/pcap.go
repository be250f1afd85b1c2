//go:build linux || darwin

package attr

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"netmon/agentmode/wire"
	"netmon/capture/source"
)

// readLatency bounds how long a frame waits in the ring before the reader
// sees it (the TPACKET_V3 block retire timeout): the socket of a
// short-lived process must still exist when its first packet is looked up.
const readLatency = 5 * time.Millisecond

// pcapBackend is the pcap backend of Linux and macOS: a packet source on
// one interface (capture/source: an AF_PACKET ring on Linux, /dev/bpf* on
// macOS), a flow table, and the socket tables read on demand to map flows
// to processes (sockTable: none on macOS without cgo).
type pcapBackend struct {
	log   *slog.Logger
	cfg   Config
	iface string
	link  int
	src   source.Source
	tab   *table
	socks sockTable

	resolveMu sync.Mutex // one socket-table read at a time
	stop      chan struct{}
	wg        sync.WaitGroup
}

// startPcap opens the capture and starts the reader and the lookup
// goroutines. Its errors are the attr_note of a refusal.
func startPcap(log *slog.Logger, cfg Config) (Backend, error) {
	iface := cfg.PcapInterface
	if iface == "" {
		var err error
		iface, err = chooseInterface(listInterfaces, isVirtual, cfg.SampleWindow, time.Sleep)
		if err != nil {
			return nil, errNoInterface(err)
		}
	}
	src, err := source.Open(iface, source.Options{Snaplen: cfg.Snaplen, BufferMB: 8, Timeout: readLatency})
	switch {
	case errors.Is(err, fs.ErrPermission):
		return nil, errors.New(notePcapDenied)
	case errors.Is(err, source.ErrNoSuchInterface):
		return nil, fmt.Errorf("pcap: interface %q not found", iface)
	case err != nil:
		return nil, fmt.Errorf("pcap: %w", err)
	}
	// Traffic between two other hosts on a virtual Ethernet device
	// (veth, bridge) belongs to containers; on a physical one it is
	// forwarded or merely seen.
	foreign := wire.ReasonNotLocal
	if isVirtual(iface) && src.LinkType() == linkEthernet {
		foreign = wire.ReasonOtherNamespace
	}
	b := &pcapBackend{
		log: log.With("iface", iface), cfg: cfg, iface: iface, link: int(src.LinkType()), src: src,
		tab: newTable(cfg, foreign), socks: newSockTable(), stop: make(chan struct{}),
	}
	b.tab.setLocal(localAddrs())
	b.wg.Add(2)
	go func() { defer b.wg.Done(); b.readLoop() }()
	go func() { defer b.wg.Done(); b.lookupLoop() }()
	return b, nil
}

func (b *pcapBackend) Method() string { return MethodPcap }
func (b *pcapBackend) Iface() string  { return b.iface }

// Note says what the running backend lacks ("" on Linux).
func (b *pcapBackend) Note() string { return pcapRunningNote }

// sockTable maps flows to processes: lookup reads the system's socket
// tables once for keys and returns the match for each.
type sockTable interface {
	lookup(keys []flowKey) (func(flowKey) (owner, bool), error)
}

// readLoop counts every frame until the source is closed.
func (b *pcapBackend) readLoop() {
	for {
		data, ci, err := b.src.ReadPacketData()
		switch {
		case err == nil:
			p, ok := parseFrame(b.link, data, ci.Length)
			b.tab.add(p, ok, ci.Length, ci.Timestamp)
		case errors.Is(err, source.ErrTimeout):
		case errors.Is(err, io.EOF):
			return
		default:
			b.log.Warn("capture read failed", "err", err)
			select {
			case <-b.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// lookupLoop reads the socket tables when new flows wait for an owner, at
// most every LookupEvery.
func (b *pcapBackend) lookupLoop() {
	for {
		select {
		case <-b.stop:
			return
		case <-b.tab.lookupWanted:
		}
		b.resolve()
		select {
		case <-b.stop:
			return
		case <-time.After(b.cfg.LookupEvery):
		}
	}
}

// resolve reads the socket tables once for the pending flows.
func (b *pcapBackend) resolve() {
	b.resolveMu.Lock()
	defer b.resolveMu.Unlock()
	keys := b.tab.pendingKeys()
	if len(keys) == 0 {
		return
	}
	match, err := b.socks.lookup(keys)
	if err != nil {
		b.log.Warn("socket tables unreadable", "err", err)
		return
	}
	b.tab.resolve(keys, match)
}

// Collect reads the socket tables once more for flows still waiting (so
// a process that lived less than LookupEvery is found if its socket is),
// then reports the interval.
func (b *pcapBackend) Collect() Report {
	b.tab.setLocal(localAddrs())
	b.resolve()
	return b.tab.report(time.Now())
}

// Stop closes the capture and waits for the goroutines.
func (b *pcapBackend) Stop() error {
	close(b.stop)
	err := b.src.Close()
	b.wg.Wait()
	return err
}

// localAddrs lists this host's addresses (in the agent's network
// namespace).
func localAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// listInterfaces reads the interfaces and their counters for
// chooseInterface.
func listInterfaces() ([]ifaceStat, error) {
	ifs, err := source.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]ifaceStat, 0, len(ifs))
	for _, it := range ifs {
		out = append(out, ifaceStat{Name: it.Name, Up: it.Up, Loopback: it.Loopback, Bytes: it.RxBytes + it.TxBytes})
	}
	return out, nil
}
