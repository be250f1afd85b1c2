//go:build darwin && !cgo

package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"strings"
	"sync"
	"syscall"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/bsdbpf"
	"github.com/gopacket/gopacket/layers"
)

// bpfSource is the Source of macOS built without cgo: a /dev/bpf* device
// read in pure Go through gopacket's bsdbpf. It is compile-checked only
// (`make cross`): no macOS host runs the tests.
//
// Limits of bsdbpf: no snaplen (frames arrive whole, Length is the
// captured length), no kernel counters (Stats counts the frames read,
// Dropped stays 0), and a new read buffer per read(2), so the buffer is
// kept small.
type bpfSource struct {
	device string
	link   layers.LinkType

	mu     sync.Mutex // held by ReadPacketData and Close
	s      *bsdbpf.BPFSniffer
	frames uint64
}

// bpfReadBuf is the read(2) buffer: bsdbpf allocates one per read.
const bpfReadBuf = 64 << 10

// Open opens a live capture on device through the first free /dev/bpf*.
// Errors wrap ErrNoSuchInterface for an unknown device and
// fs.ErrPermission when no BPF device can be opened.
func Open(device string, opt Options) (Source, error) {
	opt = opt.withDefaults()
	ifi, err := net.InterfaceByName(device)
	if err != nil || device == "" {
		return nil, fmt.Errorf("open capture on %q: %w", device, ErrNoSuchInterface)
	}
	// bsdbpf panics when no device opens: find out first, so a refusal
	// is an error the agent can report.
	if err := bpfAvailable(); err != nil {
		return nil, fmt.Errorf("open capture on %q: %w", device, err)
	}
	tv := syscall.NsecToTimeval(opt.Timeout.Nanoseconds())
	s, err := newSniffer(device, &bsdbpf.Options{ReadBufLen: bpfReadBuf, Timeout: &tv, Promisc: opt.Promisc, Immediate: true})
	if err != nil {
		return nil, fmt.Errorf("open capture on %q: %w", device, err)
	}
	return &bpfSource{device: device, link: bpfLinkType(ifi), s: s}, nil
}

// newSniffer is bsdbpf.NewBPFSniffer with its panic (every device busy
// between bpfAvailable and this call) turned into an error.
func newSniffer(device string, o *bsdbpf.Options) (s *bsdbpf.BPFSniffer, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%v", r)
		}
	}()
	return bsdbpf.NewBPFSniffer(device, o)
}

// bpfAvailable opens and closes the first /dev/bpf* it can.
func bpfAvailable() error {
	denied := false
	for i := range 99 {
		fd, err := syscall.Open(fmt.Sprintf("/dev/bpf%d", i), syscall.O_RDWR, 0)
		if err == nil {
			return syscall.Close(fd)
		}
		if errors.Is(err, fs.ErrPermission) {
			denied = true
		}
	}
	if denied {
		return fmt.Errorf("%w (packet capture needs root or read access to the /dev/bpf* devices)", fs.ErrPermission)
	}
	return errors.New("no free /dev/bpf* device")
}

// bpfLinkType is the device's data link type. bsdbpf does not expose its
// descriptor for BIOCGDLT, so it is inferred the way macOS assigns it:
// loopback and tunnels (utun, ipsec) carry DLT_NULL's 4-byte address
// family header, the rest (en*, bridges) Ethernet.
func bpfLinkType(ifi *net.Interface) layers.LinkType {
	if ifi.Flags&net.FlagLoopback != 0 || strings.HasPrefix(ifi.Name, "utun") || strings.HasPrefix(ifi.Name, "ipsec") {
		return layers.LinkTypeNull
	}
	return layers.LinkTypeEthernet
}

// ReadPacketData implements Source.
func (b *bpfSource) ReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.s == nil {
		return nil, gopacket.CaptureInfo{}, io.EOF
	}
	data, ci, err := b.s.ReadPacketData()
	switch {
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR), err == nil && len(data) == 0:
		// The read timeout expired with nothing captured (an empty
		// read makes bsdbpf return an empty frame).
		return nil, ci, ErrTimeout
	case err != nil:
		return nil, ci, fmt.Errorf("read packet on %q: %w", b.device, err)
	}
	b.frames++
	return data, ci, nil
}

// LinkType implements Source.
func (b *bpfSource) LinkType() layers.LinkType { return b.link }

// Stats implements Source: frames read (bsdbpf has no BIOCGSTATS).
func (b *bpfSource) Stats() (Stats, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Received: b.frames}, nil
}

// Close implements Source.
func (b *bpfSource) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.s == nil {
		return nil
	}
	err := b.s.Close()
	b.s = nil
	return err
}

// canSniff reports whether a /dev/bpf* device can be opened.
func canSniff(net.Interface) bool { return bpfAvailable() == nil }
