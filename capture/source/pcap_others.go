//go:build (!linux && cgo) || windows

package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"runtime"
	"sync"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcap"
)

// pcapSource is the Source of systems other than Linux: a libpcap handle
// (Npcap on Windows, loaded without cgo; the system libpcap elsewhere).
type pcapSource struct {
	device   string
	linkType layers.LinkType

	mu sync.Mutex   // held by ReadPacketData and Close
	h  *pcap.Handle // nil once closed

	stMu     sync.Mutex
	stH      *pcap.Handle
	stats    Stats
	lastRecv uint32 // libpcap's counters are u_int and wrap
	lastDrop uint32
}

// Open opens a live capture on device. The name is the operating system's
// interface name (as Interfaces reports it) or a libpcap device name; on
// Windows, where libpcap names adapters \Device\NPF_{GUID}, the interface is
// matched to its adapter by address.
//
// Errors wrap ErrNoSuchInterface for an unknown device and fs.ErrPermission
// (with a hint about the rights needed) when libpcap reports permission
// denied.
func Open(device string, opt Options) (Source, error) {
	opt = opt.withDefaults()
	name, err := pcapDevice(device)
	if err != nil {
		return nil, fmt.Errorf("open capture on %q: %w", device, err)
	}
	h, err := activate(name, opt)
	if err != nil {
		return nil, fmt.Errorf("open capture on %q: %w", device, err)
	}
	return &pcapSource{device: device, linkType: h.LinkType(), h: h, stH: h}, nil
}

// activate opens and configures a libpcap handle.
func activate(name string, opt Options) (*pcap.Handle, error) {
	in, err := pcap.NewInactiveHandle(name)
	if err != nil {
		return nil, err
	}
	defer in.CleanUp()
	for _, set := range []func() error{
		func() error { return in.SetSnapLen(opt.Snaplen) },
		func() error { return in.SetPromisc(opt.Promisc) },
		func() error { return in.SetTimeout(opt.Timeout) },
		func() error { return in.SetBufferSize(opt.BufferMB << 20) },
	} {
		if err := set(); err != nil {
			return nil, err
		}
	}
	h, err := in.Activate()
	if err != nil {
		// gopacket's activation errors are an unexported type; their
		// text is the stable part.
		switch err.Error() {
		case "Permission Denied":
			return nil, fmt.Errorf("%w (%s)", fs.ErrPermission, rightsHint())
		case "No Such Device":
			return nil, ErrNoSuchInterface
		}
		return nil, err
	}
	return h, nil
}

// rightsHint says what a permission failure needs on this system.
func rightsHint() string {
	if runtime.GOOS == "windows" {
		return "packet capture needs Npcap and administrator rights"
	}
	return "packet capture needs root or read access to the /dev/bpf* devices"
}

// pcapDevice resolves an interface name to a libpcap device name.
func pcapDevice(device string) (string, error) {
	devs, err := pcap.FindAllDevs()
	if err != nil {
		return "", fmt.Errorf("list capture devices: %w", err)
	}
	for _, d := range devs {
		if d.Name == device {
			return device, nil
		}
	}
	ifi, err := net.InterfaceByName(device)
	if err != nil || device == "" {
		return "", ErrNoSuchInterface
	}
	addrs, _ := ifi.Addrs()
	for _, d := range devs {
		for _, da := range d.Addresses {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok && n.IP.Equal(da.IP) {
					return d.Name, nil
				}
			}
		}
	}
	return "", errors.Join(ErrNoSuchInterface, errors.New("no capture device has the interface's addresses"))
}

// ReadPacketData implements Source.
func (s *pcapSource) ReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == nil {
		return nil, gopacket.CaptureInfo{}, io.EOF
	}
	data, ci, err := s.h.ZeroCopyReadPacketData()
	switch {
	case err == nil:
		return data, ci, nil
	case errors.Is(err, pcap.NextErrorTimeoutExpired):
		return nil, ci, ErrTimeout
	case errors.Is(err, io.EOF):
		return nil, ci, io.EOF
	}
	return nil, ci, fmt.Errorf("read packet on %q: %w", s.device, err)
}

// LinkType implements Source.
func (s *pcapSource) LinkType() layers.LinkType { return s.linkType }

// Stats implements Source. After Close it returns the last counters read.
func (s *pcapSource) Stats() (Stats, error) {
	s.stMu.Lock()
	defer s.stMu.Unlock()
	if err := s.refreshStatsLocked(); err != nil {
		return s.stats, fmt.Errorf("read capture stats on %q: %w", s.device, err)
	}
	return s.stats, nil
}

func (s *pcapSource) refreshStatsLocked() error {
	if s.stH == nil {
		return nil
	}
	st, err := s.stH.Stats()
	if err != nil {
		return err
	}
	recv, drop := uint32(st.PacketsReceived), uint32(st.PacketsDropped)
	s.stats.Received += uint64(recv - s.lastRecv)
	s.stats.Dropped += uint64(drop - s.lastDrop)
	s.lastRecv, s.lastDrop = recv, drop
	return nil
}

// Close implements Source.
func (s *pcapSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stMu.Lock()
	defer s.stMu.Unlock()
	if s.h == nil {
		return nil
	}
	err := s.refreshStatsLocked()
	s.h.Close()
	s.h, s.stH = nil, nil
	if err != nil {
		return fmt.Errorf("close capture on %q: read final stats: %w", s.device, err)
	}
	return nil
}

// canSniff reports whether Open would succeed: the interface resolves to a
// libpcap device that activates. That opens a BPF device (macOS, BSD) or the
// Npcap adapter (Windows) with a small snaplen and closes it again, about a
// millisecond per interface.
func canSniff(ifi net.Interface) bool {
	name, err := pcapDevice(ifi.Name)
	if err != nil {
		return false
	}
	h, err := activate(name, Options{Snaplen: 64, BufferMB: 1}.withDefaults())
	if err != nil {
		return false
	}
	h.Close()
	return true
}
