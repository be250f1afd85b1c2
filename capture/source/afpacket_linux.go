package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"reflect"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"
)

// Ring geometry. TPACKET_V3 packs variable-length frames into blocks, so the
// frame size only has to divide the block size; the block must hold the
// largest frame (snaplen plus the kernel's headers), otherwise the kernel
// truncates to the block.
const (
	ringFrameSize   = 4096
	ringBlockSize   = 1 << 20
	ringMinBlocks   = 4
	maxBlockTimeout = 64 * time.Millisecond // afpacket's default retire timeout
)

// afSource is the Linux Source: an AF_PACKET socket with a TPACKET_V3 ring.
type afSource struct {
	device   string
	linkType layers.LinkType
	snaplen  int
	fd       int // the socket, for SO_ERROR; -1 if unknown
	timeout  time.Duration

	// mu is held by ReadPacketData and by Close, so the ring is never
	// unmapped under a reader.
	mu sync.Mutex
	tp *afpacket.TPacket // nil once closed
	// loopGuard: on a loopback device, frames the kernel queued before the
	// de-duplication filter was attached may be doubles; they carry a
	// timestamp before opened and are skipped. One-shot, so a later wall
	// clock step cannot hide traffic.
	loopGuard bool
	opened    time.Time

	// stMu guards the counters and the socket while Stats reads it.
	stMu     sync.Mutex
	stTP     *afpacket.TPacket // nil once closed
	stats    Stats
	lastRecv uint32 // afpacket's wrapping uint32 totals at the last read
	lastDrop uint32
	lastFrz  uint32
}

// Open opens a live capture on device (an interface name such as "eth0").
//
// Errors wrap ErrNoSuchInterface for an unknown device and fs.ErrPermission
// (with a "needs root or CAP_NET_RAW" hint) when the process may not open
// packet sockets.
//
// On Linux the kernel runs a small classic-BPF program on the socket that
// truncates frames to the snaplen and, on loopback devices, drops the
// PACKET_OUTGOING copy of every frame: AF_PACKET sees each frame on lo once
// leaving and once arriving, libpcap shows it once, and so do we. Doing it in
// the kernel keeps the duplicates out of the ring and out of Stats.
func Open(device string, opt Options) (Source, error) {
	opt = opt.withDefaults()
	ifi, err := net.InterfaceByName(device)
	if err != nil || device == "" {
		return nil, fmt.Errorf("open capture on %q: %w", device, ErrNoSuchInterface)
	}
	linkType, err := linkTypeOf(device)
	if err != nil {
		return nil, fmt.Errorf("open capture on %q: %w", device, err)
	}
	blockSize := ringBlockSize
	if need := opt.Snaplen + 2*ringFrameSize; need > blockSize {
		blockSize = (need + ringFrameSize - 1) / ringFrameSize * ringFrameSize
	}
	blocks := max(opt.BufferMB<<20/blockSize, ringMinBlocks)
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(device),
		afpacket.TPacketVersion3,
		afpacket.OptFrameSize(ringFrameSize),
		afpacket.OptBlockSize(blockSize),
		afpacket.OptNumBlocks(blocks),
		afpacket.OptBlockTimeout(min(max(opt.Timeout, time.Millisecond), maxBlockTimeout)),
		afpacket.OptPollTimeout(opt.Timeout),
		afpacket.OptAddVLANHeader(true), // recordings keep the 802.1Q tag
	)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("open capture on %q: %w (%s)", device, err, permissionHint)
		}
		return nil, fmt.Errorf("open capture on %q: %w", device, err)
	}
	loopback := ifi.Flags&net.FlagLoopback != 0
	prog, err := socketFilter(opt.Snaplen, loopback)
	if err == nil {
		err = tp.SetBPF(prog)
	}
	if err == nil && opt.Promisc {
		err = tp.SetPromiscuous(true) // dropped by the kernel when the socket closes
	}
	if err != nil {
		tp.Close()
		return nil, fmt.Errorf("open capture on %q: configure socket: %w", device, err)
	}
	return &afSource{
		device:    device,
		linkType:  linkType,
		snaplen:   opt.Snaplen,
		fd:        socketFD(tp),
		timeout:   opt.Timeout,
		tp:        tp,
		stTP:      tp,
		loopGuard: loopback,
		opened:    time.Now(),
	}, nil
}

// ReadPacketData implements Source.
func (s *afSource) ReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.tp == nil {
			return nil, gopacket.CaptureInfo{}, io.EOF
		}
		data, ci, err := s.tp.ZeroCopyReadPacketData()
		if err != nil {
			return nil, ci, s.readError(err)
		}
		if s.loopGuard {
			if ci.Timestamp.Before(s.opened) {
				continue
			}
			s.loopGuard = false
		}
		if len(data) > s.snaplen { // only a re-inserted VLAN tag can do this
			data = data[:s.snaplen]
			ci.CaptureLength = s.snaplen
		}
		return data, ci, nil
	}
}

// readError maps afpacket's errors to the Source contract.
//
// When the interface goes down the kernel sets ENETDOWN on the socket, and
// poll keeps reporting POLLERR until the error is read: afpacket returns
// ErrPoll at once on every call, a busy loop. Reading SO_ERROR clears it; the
// socket stays bound and resumes when the link comes back (the kernel
// re-registers it on NETDEV_UP), so a link flap does not end the capture. We
// wait one poll timeout and report ErrTimeout.
func (s *afSource) readError(err error) error {
	switch {
	case errors.Is(err, afpacket.ErrTimeout):
		return ErrTimeout
	case errors.Is(err, afpacket.ErrPoll) && s.fd >= 0:
		soErr, gerr := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if gerr != nil {
			return fmt.Errorf("read packet on %q: %w: %w", s.device, err, gerr)
		}
		if soErr != 0 && soErr != int(unix.ENETDOWN) {
			return fmt.Errorf("read packet on %q: %w", s.device, unix.Errno(soErr))
		}
		time.Sleep(s.timeout)
		return ErrTimeout
	default:
		return fmt.Errorf("read packet on %q: %w", s.device, err)
	}
}

// LinkType implements Source.
func (s *afSource) LinkType() layers.LinkType { return s.linkType }

// Stats implements Source. After Close it returns the last counters read.
func (s *afSource) Stats() (Stats, error) {
	s.stMu.Lock()
	defer s.stMu.Unlock()
	if err := s.refreshStatsLocked(); err != nil {
		return s.stats, fmt.Errorf("read capture stats on %q: %w", s.device, err)
	}
	return s.stats, nil
}

// refreshStatsLocked folds the kernel's counters into s.stats. afpacket sums
// them into uint32 fields that wrap; the uint32 difference is still right as
// long as fewer than 2^32 frames pass between two reads.
func (s *afSource) refreshStatsLocked() error {
	if s.stTP == nil {
		return nil
	}
	_, v3, err := s.stTP.SocketStats()
	if err != nil {
		return err
	}
	recv, drop, frz := uint32(v3.Packets()), uint32(v3.Drops()), uint32(v3.QueueFreezes())
	s.stats.Received += uint64(recv - s.lastRecv)
	s.stats.Dropped += uint64(drop - s.lastDrop)
	s.stats.Freezes += uint64(frz - s.lastFrz)
	s.lastRecv, s.lastDrop, s.lastFrz = recv, drop, frz
	return nil
}

// Close implements Source. It waits for a read in progress (at most one poll
// timeout), keeps the final counters for Stats and closes the socket.
func (s *afSource) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stMu.Lock()
	defer s.stMu.Unlock()
	if s.tp == nil {
		return nil
	}
	err := s.refreshStatsLocked()
	s.tp.Close()
	s.tp, s.stTP, s.fd = nil, nil, -1
	if err != nil {
		return fmt.Errorf("close capture on %q: read final stats: %w", s.device, err)
	}
	return nil
}

// socketFD returns the TPacket's socket descriptor, which afpacket keeps in
// an unexported field and exposes through no method. Reading an unexported
// int through reflect is allowed; the only use is SO_ERROR in readError. If a
// later afpacket renames the field we get -1 and readError degrades to
// returning ErrPoll as an error (the test suite would notice).
func socketFD(tp *afpacket.TPacket) int {
	f := reflect.ValueOf(tp).Elem().FieldByName("fd")
	if !f.IsValid() || f.Kind() != reflect.Int {
		return -1
	}
	return int(f.Int())
}
