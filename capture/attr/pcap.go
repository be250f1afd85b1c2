//go:build linux || darwin || windows

package attr

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"netmon/capture/source"
)

// readLatency bounds how long a frame waits in the ring before the reader
// sees it (the TPACKET_V3 block retire timeout on Linux, the read timeout
// of Npcap): the socket of a short-lived process must still exist when its
// first packet is looked up.
const readLatency = 5 * time.Millisecond

// pcapBackend is the pcap backend of Linux, macOS and Windows: a packet
// source on one interface (capture/source: an AF_PACKET ring on Linux,
// /dev/bpf* on macOS, Npcap on Windows), a flow table, and the socket
// tables read on demand to map flows to processes (sockTable: sock_diag
// and /proc on Linux, the iphlpapi tables on Windows, none on macOS
// without cgo). What differs per system is how the capture is opened
// (openCapture: pcap_unix.go, pcap_windows.go) and the socket table.
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

// capture is an open packet source and what the backend needs to know
// of it.
type capture struct {
	iface   string // attr_iface
	src     source.Source
	foreign string // the unattributed reason of traffic between two other hosts
}

// startPcap opens the capture and starts the reader and the lookup
// goroutines. Its errors are the attr_note of a refusal.
func startPcap(log *slog.Logger, cfg Config) (Backend, error) {
	c, err := openCapture(cfg)
	if err != nil {
		return nil, err
	}
	b := &pcapBackend{
		log: log.With("iface", c.iface), cfg: cfg, iface: c.iface, link: int(c.src.LinkType()), src: c.src,
		tab: newTable(cfg, c.foreign), socks: newSockTable(), stop: make(chan struct{}),
	}
	b.tab.setLocal(localAddrs())
	b.wg.Add(2)
	go func() { defer b.wg.Done(); b.readLoop() }()
	go func() { defer b.wg.Done(); b.lookupLoop() }()
	return b, nil
}

func (b *pcapBackend) Method() string { return MethodPcap }
func (b *pcapBackend) Iface() string  { return b.iface }

// Note says what the running backend lacks ("" on Linux and Windows).
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
