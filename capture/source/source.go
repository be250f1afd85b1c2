// Package source opens live packet sources for the capture component.
//
// It sits under capture/ as a producer-side leaf: it imports no other netmon
// package and knows nothing of statistics, recording or HTTP. The capture
// component (capture/) and the agent's pcap attribution backend read frames
// from a Source and decide what to do with them.
//
// Platform code is split by build tags (STYLE habit 11):
//
//   - Linux (afpacket_linux.go): AF_PACKET with a TPACKET_V3 memory-mapped
//     ring through github.com/gopacket/gopacket/afpacket. Pure Go, no cgo,
//     so the release binary stays CGO_ENABLED=0.
//   - Windows, and other systems built with cgo (pcap_others.go): libpcap
//     (Npcap on Windows, which gopacket loads without cgo).
//   - macOS built without cgo (bpf_darwin.go): /dev/bpf* in pure Go through
//     github.com/gopacket/gopacket/bsdbpf; compile-checked only.
//   - Other systems built without cgo (nocapture_others.go): Open fails with
//     ErrUnsupported, Interfaces still works and reports can_sniff=false.
package source

import (
	"errors"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Source delivers raw link-layer frames from one interface.
//
// A Source is read by one goroutine. Close may be called from any goroutine;
// it waits for a ReadPacketData in progress to return (at most one poll
// timeout) and later reads return io.EOF.
type Source interface {
	// ReadPacketData returns the next frame. The data slice points into a
	// buffer shared with the kernel and is valid only until the next call
	// (or Close); copy what must be kept. It returns ErrTimeout when no
	// frame arrived within the poll timeout, so the caller can check for a
	// stop request, and io.EOF once the source is closed.
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	// LinkType is the link-layer type of every frame (for decoding and for
	// the pcap file header).
	LinkType() layers.LinkType
	// Stats returns the kernel's counters, cumulative since Open.
	Stats() (Stats, error)
	// Close releases the socket and its ring. It is safe to call twice.
	Close() error
}

// Stats are the kernel's counters for a Source, cumulative since Open.
type Stats struct {
	// Received counts frames the kernel accepted for this socket after
	// its filter, including the ones it then had to drop (the libpcap
	// ps_recv convention). On Linux the loopback duplicates removed by
	// the filter are not counted.
	Received uint64 `json:"received"`
	// Dropped counts frames the kernel dropped because the ring was full:
	// the reader was too slow.
	Dropped uint64 `json:"dropped"`
	// Freezes counts the times the kernel froze the ring because every
	// block was full (TPACKET_V3 on Linux; 0 with libpcap): each is a
	// burst the reader fell behind on.
	Freezes uint64 `json:"freezes"`
}

// Options tune Open. The zero value gives the defaults.
type Options struct {
	// Snaplen is the most bytes kept of each frame; 0 means DefaultSnaplen.
	// Longer frames are truncated (CaptureInfo.Length keeps the real size).
	Snaplen int
	// Promisc puts the interface in promiscuous mode while the source is
	// open, to see frames addressed to other hosts.
	Promisc bool
	// BufferMB is the kernel ring (Linux) or libpcap buffer size in MiB;
	// 0 means DefaultBufferMB. A bigger ring absorbs longer bursts while
	// the reader is busy.
	BufferMB int
	// Timeout is how long ReadPacketData waits for a frame before it
	// returns ErrTimeout; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Defaults of Options.
const (
	// DefaultSnaplen is libpcap's default: it keeps whole frames, including
	// the GRO/GSO super-frames seen on lo and veth (up to 64 KiB and more
	// with BIG TCP), so a recording is complete.
	DefaultSnaplen = 262144
	// DefaultBufferMB holds about 50 ms of a saturated 10 Gbit/s link, or
	// several seconds of typical office traffic.
	DefaultBufferMB = 32
	// DefaultTimeout bounds how long a stop request waits for the reader.
	DefaultTimeout = 100 * time.Millisecond
)

// withDefaults returns o with zero fields replaced by the defaults.
func (o Options) withDefaults() Options {
	if o.Snaplen <= 0 {
		o.Snaplen = DefaultSnaplen
	}
	if o.BufferMB <= 0 {
		o.BufferMB = DefaultBufferMB
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	return o
}

var (
	// ErrTimeout is returned by ReadPacketData when no frame arrived within
	// the poll timeout. It is not a failure: read again.
	ErrTimeout = errors.New("packet source: poll timeout")
	// ErrNoSuchInterface is wrapped by Open for an unknown device name.
	ErrNoSuchInterface = errors.New("no such interface")
	// ErrUnsupported is wrapped by Open on a build that has no capture
	// backend (a non-Linux system built without cgo).
	ErrUnsupported = errors.New("packet capture needs libpcap (build with cgo)")
)

// permissionHint is appended to permission failures so the API's
// {ok:false, error} body tells the operator what to do.
const permissionHint = "packet capture needs root or the CAP_NET_RAW capability"
