package source

import (
	"fmt"
	"net"

	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// socketFilter builds the classic-BPF program attached to every capture
// socket. A socket filter's return value is the number of bytes to keep, so
// "ret #snaplen" is how AF_PACKET gets a snaplen at all (the ring has no such
// option). On loopback the program first loads the skb's packet type (an
// ancillary load, SKF_AD_PKTTYPE) and drops PACKET_OUTGOING: every frame on
// lo is seen leaving and arriving, and only the arriving copy is kept.
func socketFilter(snaplen int, loopback bool) ([]bpf.RawInstruction, error) {
	keep := bpf.RetConstant{Val: uint32(snaplen)}
	prog := []bpf.Instruction{keep}
	if loopback {
		prog = []bpf.Instruction{
			bpf.LoadExtension{Num: bpf.ExtType},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.PACKET_OUTGOING, SkipFalse: 1},
			bpf.RetConstant{Val: 0},
			keep,
		}
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("assemble socket filter: %w", err)
	}
	return raw, nil
}

// ARPHRD_* hardware types (linux/if_arp.h) that capture understands.
const (
	arphrdEther     = 1
	arphrdPPP       = 512
	arphrdRawIP     = 519
	arphrdTunnel    = 768
	arphrdTunnel6   = 769
	arphrdLoopback  = 772
	arphrdSit       = 776
	arphrdIPGRE     = 778
	arphrdIEEE80211 = 801
	arphrdRadiotap  = 803
	arphrdIP6GRE    = 823
	arphrdNone      = 0xFFFE
)

// linkTypeOf maps the device's ARPHRD hardware type (SIOCGIFHWADDR, which
// needs no privilege) to the link type of the frames a SOCK_RAW packet socket
// returns. Devices without a link-layer header (tun, WireGuard, IP tunnels,
// PPP) deliver bare IP packets: LINKTYPE_RAW.
func linkTypeOf(device string) (layers.LinkType, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("read hardware type: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(device)
	if err != nil {
		return 0, fmt.Errorf("read hardware type: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFHWADDR, ifr); err != nil {
		return 0, fmt.Errorf("read hardware type: %w", err)
	}
	hw := ifr.Uint16() // ifr_hwaddr.sa_family
	switch hw {
	case arphrdEther, arphrdLoopback:
		return layers.LinkTypeEthernet, nil
	case arphrdNone, arphrdRawIP, arphrdPPP, arphrdTunnel, arphrdTunnel6,
		arphrdSit, arphrdIPGRE, arphrdIP6GRE:
		return layers.LinkTypeRaw, nil
	case arphrdIEEE80211:
		return layers.LinkTypeIEEE802_11, nil
	case arphrdRadiotap:
		return layers.LinkTypeIEEE80211Radio, nil
	}
	return 0, fmt.Errorf("unsupported hardware type ARPHRD %d", hw)
}

// canSniff reports whether Open could capture on the interface: its link
// type is one we can frame, and an AF_PACKET socket opened with protocol 0
// (so no frame is ever queued to it) binds to it. About five system calls,
// no ring, no mmap: a few microseconds per interface. Binding succeeds on an
// interface that is down, and so does Open (frames flow once the link comes
// up), so a down interface reports can_sniff=true with up=false.
func canSniff(ifi net.Interface) bool {
	if _, err := linkTypeOf(ifi.Name); err != nil {
		return false
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifi.Index}) == nil
}
