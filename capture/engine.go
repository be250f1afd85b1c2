// Package capture is packet observation used by the hub and the agent; it
// imports only leaves (capture/decode, capture/source, capture/pcaprec).
//
// The stats engine (Engine) turns frames into the live snapshot of spec
// section 2.1: totals, per-second history, protocols, top endpoints, top
// ports and the DNS domain table. The capture component (Capture, in
// capture.go) owns a live source from capture/source, feeds the engine and
// the PCAP recorder (capture/pcaprec), keeps the minute history, fills
// Snapshot.Running, Device, Error and Dropped, and counts what it sees in
// metrics.go. Pcap and pcapng files are read by the tests' FileSource
// (pcapfile_test.go), for the golden tests and benchmarks.
package capture

import (
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"netmon/capture/decode"
)

// EngineConfig configures an Engine.
type EngineConfig struct {
	// LocalNets are the capture interface's own addresses with their
	// prefix length, as the interface lists them (192.168.1.10/24,
	// fe80::1/64). The address is "own" (the host itself); the masked
	// prefix is "local" (its networks). Both decide a packet's direction.
	LocalNets []netip.Prefix
	// Now is the wall clock; nil means time.Now. Tests fix it.
	Now func() time.Time
}

// Engine is the per-packet statistics engine. Process is called from one
// goroutine; Snapshot, Minute, TakeRemoteMinute, Counters and Reset may be
// called from any other goroutine at the same time. The state is guarded by
// one mutex held only for the few map and array updates of each packet;
// decoding and DNS parsing happen outside it.
type Engine struct {
	enrich Enricher
	now    func() time.Time
	own    []netip.Addr   // exact own addresses
	nets   []netip.Prefix // masked LocalNets

	// Decoding state, owned by the Process goroutine.
	linkType layers.LinkType
	parser   *gopacket.DecodingLayerParser
	parser6  *gopacket.DecodingLayerParser // raw-IP link types: IPv6 frames
	decoded  []gopacket.LayerType
	loop     layers.Loopback
	eth      layers.Ethernet
	sll      layers.LinuxSLL
	sll2     layers.LinuxSLL2
	vlan     layers.Dot1Q
	arp      layers.ARP
	ip4      layers.IPv4
	ip6      layers.IPv6
	tcp      layers.TCP
	udp      layers.UDP
	icmp4    layers.ICMPv4
	icmp6    layers.ICMPv6
	dns      decode.DNSMessage

	mu sync.Mutex
	st stats // guarded by mu
}

// NewEngine returns an engine for Ethernet frames (see SetLinkType).
// enrich gives the country and ASN of top endpoints; it may be nil.
func NewEngine(cfg EngineConfig, enrich Enricher) *Engine {
	e := &Engine{enrich: enrich, now: cfg.Now, decoded: make([]gopacket.LayerType, 0, 16)}
	if e.now == nil {
		e.now = time.Now
	}
	for _, p := range cfg.LocalNets {
		if !p.IsValid() {
			continue
		}
		e.own = append(e.own, p.Addr().Unmap())
		e.nets = append(e.nets, netip.PrefixFrom(p.Addr().Unmap(), p.Bits()).Masked())
	}
	e.st.init(defaultLimits)
	if err := e.SetLinkType(layers.LinkTypeEthernet); err != nil {
		panic(err) // Ethernet is always supported
	}
	return e
}

// SetLinkType selects how frames given to Process start: Ethernet, Linux
// cooked capture (SLL, SLL2), BSD loopback (Null, Loop) or raw IP (Raw,
// IPv4, IPv6). It must be called before Process or from the goroutine that
// calls Process. Other link types are an error and leave the engine as it
// was.
func (e *Engine) SetLinkType(lt layers.LinkType) error {
	var first gopacket.LayerType
	switch lt {
	case layers.LinkTypeEthernet:
		first = layers.LayerTypeEthernet
	case layers.LinkTypeLinuxSLL:
		first = layers.LayerTypeLinuxSLL
	case layers.LinkTypeLinuxSLL2:
		first = layers.LayerTypeLinuxSLL2
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		first = layers.LayerTypeLoopback
	case layers.LinkTypeRaw, layers.LinkTypeIPv4:
		first = layers.LayerTypeIPv4
	case layers.LinkTypeIPv6:
		first = layers.LayerTypeIPv6
	default:
		return fmt.Errorf("unsupported link type %v (%d)", lt, int(lt))
	}
	e.linkType = lt
	e.parser = e.newParser(first)
	e.parser6 = nil
	if lt == layers.LinkTypeRaw {
		e.parser6 = e.newParser(layers.LayerTypeIPv6)
	}
	return nil
}

// LinkType returns the link type set by SetLinkType.
func (e *Engine) LinkType() layers.LinkType { return e.linkType }

func (e *Engine) newParser(first gopacket.LayerType) *gopacket.DecodingLayerParser {
	p := gopacket.NewDecodingLayerParser(first)
	// A sparse array indexed by layer type is the fastest container.
	p.SetDecodingLayerContainer(gopacket.DecodingLayerSparse(nil))
	for _, l := range []gopacket.DecodingLayer{
		&e.loop, &e.eth, &e.sll, &e.sll2, &e.vlan, &e.arp,
		&e.ip4, &e.ip6, &e.tcp, &e.udp, &e.icmp4, &e.icmp6,
	} {
		p.AddDecodingLayer(l)
	}
	// Application layers (DNS, TLS, ...) and unknown ethertypes end the
	// walk without an error; the layers decoded so far are used.
	p.IgnoreUnsupported = true
	return p
}

// packet is what Process extracts from one frame.
type packet struct {
	proto    proto
	src, dst netip.Addr // zero unless an IP layer was decoded
	ipProto  layers.IPProtocol
	sport    uint16
	dport    uint16
	ports    bool   // TCP or UDP ports are set
	dns      []byte // a DNS message to parse, if any
	bad      bool   // a layer failed to decode (truncated or corrupt)
}

// Process accounts one frame. data is the frame as captured (it may be cut
// by the snap length), ci.Length its length on the wire (used for byte
// counts; len(data) if zero) and ci.Timestamp the second it is counted in.
// Process does not keep data. It allocates nothing in steady state.
func (e *Engine) Process(data []byte, ci gopacket.CaptureInfo) {
	size := int64(ci.Length)
	if size <= 0 {
		size = int64(len(data))
	}
	var p packet
	e.decodeFrame(data, &p)
	dnsOK := false
	if p.dns != nil {
		dnsOK = decode.ParseDNS(p.dns, &e.dns) == nil
	}
	sec := ci.Timestamp.Unix()

	e.mu.Lock()
	e.st.account(e, &p, size, sec)
	if p.dns != nil {
		if dnsOK {
			e.st.recordDNS(&e.dns)
		} else {
			e.st.counters.DNSErrors++
		}
	}
	e.mu.Unlock()
}

func (e *Engine) decodeFrame(data []byte, p *packet) {
	parser := e.parser
	if e.parser6 != nil && len(data) > 0 && data[0]>>4 == 6 {
		parser = e.parser6
	}
	if err := parser.DecodeLayers(data, &e.decoded); err != nil {
		p.bad = true
	}
	p.proto = protoOther
	for _, typ := range e.decoded {
		switch typ {
		case layers.LayerTypeARP:
			p.proto = protoARP
		case layers.LayerTypeIPv4:
			// Tunnels re-decode into the same layer: the innermost
			// IP header wins.
			p.src = addrFrom(e.ip4.SrcIP)
			p.dst = addrFrom(e.ip4.DstIP)
			p.ipProto = e.ip4.Protocol
		case layers.LayerTypeIPv6:
			p.src = addrFrom(e.ip6.SrcIP)
			p.dst = addrFrom(e.ip6.DstIP)
			p.ipProto = e.ip6.NextHeader
			if e.ip6.HopByHop != nil {
				p.ipProto = e.ip6.HopByHop.NextHeader
			}
		case layers.LayerTypeTCP:
			p.sport, p.dport, p.ports = uint16(e.tcp.SrcPort), uint16(e.tcp.DstPort), true
			// DNS over TCP: only a segment holding one whole message
			// (its two-byte length prefix matches); streams are not
			// reassembled.
			if (p.sport == 53 || p.dport == 53) && len(e.tcp.Payload) > 2 &&
				int(e.tcp.Payload[0])<<8|int(e.tcp.Payload[1]) == len(e.tcp.Payload)-2 {
				p.dns = e.tcp.Payload[2:]
			}
		case layers.LayerTypeUDP:
			p.sport, p.dport, p.ports = uint16(e.udp.SrcPort), uint16(e.udp.DstPort), true
			if (p.sport == 53 || p.dport == 53) && len(e.udp.Payload) > 0 {
				p.dns = e.udp.Payload
			}
		}
	}
	if p.src.IsValid() {
		switch p.ipProto {
		case layers.IPProtocolTCP:
			p.proto = protoTCP
		case layers.IPProtocolUDP:
			p.proto = protoUDP
		case layers.IPProtocolICMPv4:
			p.proto = protoICMP
		case layers.IPProtocolICMPv6:
			p.proto = protoICMPv6
		}
	}
}

// addrFrom converts a 4- or 16-byte address; IPv4-mapped IPv6 addresses
// become IPv4 so both spellings share one endpoint.
func addrFrom(b []byte) netip.Addr {
	a, _ := netip.AddrFromSlice(b)
	return a.Unmap()
}

// Reset clears every counter and table, as at the start of a capture.
// Memory already allocated is kept for reuse.
func (e *Engine) Reset() {
	e.mu.Lock()
	e.st.reset()
	e.mu.Unlock()
}

// Counters are the engine's own health counters, for metrics.
type Counters struct {
	DecodeErrors     int64 // frames with a layer that failed to decode (still counted)
	DNSErrors        int64 // port-53 payloads ParseDNS rejected
	EndpointsEvicted int64 // endpoints dropped from the full endpoint table
	DomainsEvicted   int64 // domains dropped from the full domain table
	// Packets and bytes of public remotes left out of TakeRemoteMinute
	// because its table was full.
	RemoteOverflow, RemoteOverflowBytes int64
}

// Counters returns the health counters accumulated since the last Reset.
func (e *Engine) Counters() Counters {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st.counters
}
