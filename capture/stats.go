package capture

import (
	"math"
	"net/netip"
)

// proto is the protocol class a packet is counted under in
// Snapshot.Protocols.
type proto uint8

const (
	protoTCP proto = iota
	protoUDP
	protoICMP
	protoICMPv6
	protoARP
	protoOther
	numProtos
)

// protoNames are the keys of Snapshot.Protocols. "Other" is everything
// else: IP packets of another transport (GRE, ESP, SCTP, IPv6 packets
// whose next header is an extension we do not walk, such as a fragment
// header) and non-IP frames (LLDP, STP, ...), including frames too short or
// corrupt to decode. So the counts always add up to total_packets.
var protoNames = [numProtos]string{"TCP", "UDP", "ICMP", "ICMPv6", "ARP", "Other"}

// limits bound every table of the engine. Tests shrink them.
type limits struct {
	endpoints     int // endpoint table entries
	domains       int // domain table entries (spec: 4096)
	domainIPs     int // addresses kept per domain (spec: 4); at most len(domainSlot.ips)
	hostnames     int // IP -> name entries
	remoteMinute  int // addresses per TakeRemoteMinute period
	topEndpoints  int
	topPorts      int
	topDomains    int
	history       int // seconds in Snapshot.History
	evictFraction int // the full endpoint table evicts 1/evictFraction of its entries
}

var defaultLimits = limits{
	endpoints:     65536,
	domains:       4096,
	domainIPs:     4,
	hostnames:     16384,
	remoteMinute:  10000,
	topEndpoints:  50,
	topPorts:      25,
	topDomains:    30,
	history:       120,
	evictFraction: 16,
}

// ringSeconds is how many one-second buckets the engine keeps. Snapshot
// shows the last limits.history (120) of them; the extra minute lets the
// caller ask Minute for a minute up to two minutes after it ended, so a
// late once-a-minute tick loses nothing.
const ringSeconds = 180

// noSecond marks an unused bucket.
const noSecond = math.MinInt64

// endpointStat is one endpoint's counters. A slot of the slab is live
// while packets > 0 (an entry gets its first packet as soon as it is
// made).
type endpointStat struct {
	key              addrKey
	in, out, packets int64
}

func (s endpointStat) total() int64 { return s.in + s.out }

// portStat is one port's counters.
type portStat struct {
	bytes, packets int64
}

// stats is the engine state guarded by Engine.mu.
type stats struct {
	lim      limits
	counters Counters

	totalPackets, totalBytes int64
	protos                   [numProtos]int64

	ring    [ringSeconds]Bucket
	newest  int64 // newest second seen; noSecond before the first packet
	oldest  int64 // oldest second seen (within the ring), for History
	seenAny bool

	// endpoints indexes epSlab; freed slots go to epFree. Values live in a
	// slab so a new endpoint costs no allocation once the slab is full.
	endpoints map[addrKey]int32
	epSlab    []endpointStat
	epFree    []int32
	epLast    int32   // slot of the last endpoint used, a one-entry cache
	evictBuf  []int64 // scratch for endpoint eviction

	ports     *[65536]portStat
	portsUsed []uint16 // ports with a non-zero entry, for Snapshot and reset

	domains   domainTable
	hostnames map[netip.Addr]string

	remote map[addrKey]int64 // bytes per public remote since TakeRemoteMinute
}

func (s *stats) init(lim limits) {
	s.lim = lim
	s.endpoints = make(map[addrKey]int32, 1024)
	s.epSlab = make([]endpointStat, 0, lim.endpoints)
	s.ports = new([65536]portStat)
	s.portsUsed = make([]uint16, 0, 1024)
	s.domains.init(lim.domains)
	s.hostnames = make(map[netip.Addr]string, 1024)
	s.remote = make(map[addrKey]int64, 1024)
	s.reset()
}

func (s *stats) reset() {
	s.counters = Counters{}
	s.totalPackets, s.totalBytes = 0, 0
	s.protos = [numProtos]int64{}
	for i := range s.ring {
		s.ring[i] = Bucket{TS: noSecond}
	}
	s.newest, s.oldest, s.seenAny = noSecond, noSecond, false
	clear(s.endpoints)
	s.epSlab = s.epSlab[:0]
	s.epFree = s.epFree[:0]
	for _, p := range s.portsUsed {
		s.ports[p] = portStat{}
	}
	s.portsUsed = s.portsUsed[:0]
	s.domains.reset()
	clear(s.hostnames)
	clear(s.remote)
}

// account adds one decoded packet of size bytes seen in second sec.
func (s *stats) account(e *Engine, p *packet, size, sec int64) {
	s.totalPackets++
	s.totalBytes += size
	s.protos[p.proto]++
	if p.bad {
		s.counters.DecodeErrors++
	}

	// Non-IP frames (ARP, LLDP, ...) never leave the link: local.
	dir, remote := dirLocal, netip.Addr{}
	if p.src.IsValid() {
		dir, remote = e.classify(p.src, p.dst)
	}

	if b := s.bucket(sec); b != nil {
		b.Packets++
		switch dir {
		case dirIn:
			b.In += size
		case dirOut:
			b.Out += size
		default:
			b.Local += size
		}
	}

	if remote.IsValid() {
		k := keyOf(remote)
		ep := s.endpoint(k)
		if remote == p.src {
			ep.in += size
		} else {
			ep.out += size
		}
		ep.packets++
		// in and out endpoints are never local (see classify)
		if dir != dirLocal && remote.IsGlobalUnicast() {
			s.addRemote(k, size)
		}
	}

	if p.ports {
		port := servicePort(p.sport, p.dport)
		ps := &s.ports[port]
		if ps.packets == 0 {
			s.portsUsed = append(s.portsUsed, port)
		}
		ps.bytes += size
		ps.packets++
	}
}

// servicePort picks the port a TCP or UDP packet is counted under: the one
// with a service name if only one has; otherwise the lower one, since
// servers listen on low ports and clients use ephemeral ones (32768 and up
// on Linux, 49152 and up elsewhere).
func servicePort(a, b uint16) uint16 {
	ka, kb := ServiceName(a) != "", ServiceName(b) != ""
	switch {
	case ka && !kb:
		return a
	case kb && !ka:
		return b
	}
	return min(a, b)
}

// addRemote adds bytes for a public remote address to the per-minute
// table of TakeRemoteMinute, or counts them as overflow when it is full.
func (s *stats) addRemote(k addrKey, size int64) {
	if len(s.remote) < s.lim.remoteMinute {
		s.remote[k] += size // one map operation in the common case
		return
	}
	if _, ok := s.remote[k]; ok {
		s.remote[k] += size
		return
	}
	s.counters.RemoteOverflow++
	s.counters.RemoteOverflowBytes += size
}
