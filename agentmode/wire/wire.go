// Package wire is the hub<->agent protocol (spec 2.9, 4.6): the JSON bodies
// of hello, certificate renewal and telemetry, and the constants both sides
// must agree on. It is a leaf (standard library only), imported by the
// agent (agentmode) and by the hub's fleet service and API, so the two
// sides cannot drift apart.
package wire

// ProtocolVersion is the agent protocol this build speaks (spec 9.2). The
// hub answers hello with the highest version it supports; an agent that is
// newer degrades to it.
const ProtocolVersion = 1

// HeaderEnrollToken carries the enroll secret of a hello: the static
// -enroll-token or an ent_ token.
const HeaderEnrollToken = "X-Enroll-Token"

// Paths of the agent routes on the hub.
const (
	PathHello     = "/api/v1/agent/hello"
	PathCert      = "/api/v1/agent/cert"
	PathTelemetry = "/api/v1/agent/telemetry"
)

// Body size limits the hub enforces (413 beyond them). A hello is a few
// hundred bytes plus an optional CSR; a telemetry batch carries the
// connection inventory, which on a busy server is thousands of sockets.
const (
	MaxHelloBytes     = 4 << 10
	MaxCertBytes      = 4 << 10
	MaxTelemetryBytes = 4 << 20
)

// Count limits of one telemetry batch the hub enforces (413 beyond them).
// The agent trims its connection inventory to MaxConnections before it
// sends: a host with more sockets (a busy server, tens of thousands of
// TIME_WAIT) must still report, not have every batch refused.
const (
	MaxInterfaces  = 512
	MaxConnections = 20000
)

// DefaultIntervalSeconds is the hub's default telemetry interval.
const DefaultIntervalSeconds = 30

// CertCNPrefix prefixes the agent id in a client certificate's common
// name: netmon-agent-<id>. The hub sets it whatever the CSR asks for.
const CertCNPrefix = "netmon-agent-"

// Hello is the enrollment request (spec 2.9).
type Hello struct {
	Name            string `json:"name"`
	Site            string `json:"site"`
	Version         string `json:"version"`
	ProtocolVersion int    `json:"protocol_version"`
	OS              string `json:"os"`
	Arch            string `json:"arch"`
	// MachineID identifies the machine across re-enrollments: a random id
	// the agent creates once and keeps in its state file. A hello with the
	// machine id of an enrolled agent replaces that agent's record (its old
	// token and certificate stop working) instead of adding a second one.
	MachineID string `json:"machine_id,omitempty"`
	// CSRPEM is an optional PEM certificate request; its subject is
	// ignored (the hub sets CN netmon-agent-<id>).
	CSRPEM string `json:"csr_pem,omitempty"`
}

// HelloResponse is the hub's answer to an accepted hello.
type HelloResponse struct {
	Accepted                 bool   `json:"accepted"`
	AgentID                  int64  `json:"agent_id"`
	AgentToken               string `json:"agent_token"`
	TelemetryIntervalSeconds int    `json:"telemetry_interval_seconds"`
	PcapEnabled              bool   `json:"pcap_enabled"`
	// ProtocolVersion is the highest protocol version the hub supports.
	ProtocolVersion int `json:"protocol_version"`
	// ClientCertPEM and CACertPEM are set when a CSR was sent and the hub
	// runs with TLS.
	ClientCertPEM string `json:"client_cert_pem,omitempty"`
	CACertPEM     string `json:"ca_cert_pem,omitempty"`
}

// CertRequest asks for a (renewed) client certificate.
type CertRequest struct {
	CSRPEM string `json:"csr_pem"`
}

// CertResponse carries the signed client certificate and the hub CA.
type CertResponse struct {
	ClientCertPEM string `json:"client_cert_pem"`
	CACertPEM     string `json:"ca_cert_pem"`
}

// Telemetry is one batch (spec 2.9).
type Telemetry struct {
	// TS is when the batch was taken, Unix seconds. The hub replaces a ts
	// outside [now-7 days, now+1 day] by its receive time.
	TS int64 `json:"ts"`
	// Seq numbers the agent's batches 1, 2, 3 ... (persisted in its state
	// file, so it survives restarts). The hub stores a batch once: a
	// repeated seq (a retry whose answer was lost) is acknowledged and
	// ignored. 0 means the agent does not number its batches.
	Seq uint64 `json:"seq,omitempty"`
	// Dropped counts batches the agent's offline queue discarded (oldest
	// first) since it last reported, so the hub learns of the loss.
	Dropped     uint64       `json:"dropped,omitempty"`
	Interfaces  []Interface  `json:"interfaces"`
	Connections []Connection `json:"connections"`
	// AttrMethod is the active attribution backend: ebpf, pcap, etw or off;
	// AttrIface the pcap interface; AttrNote why attribution is off.
	AttrMethod string `json:"attr_method,omitempty"`
	AttrIface  string `json:"attr_iface,omitempty"`
	AttrNote   string `json:"attr_note,omitempty"`
	// Version is the agent's build version (it may change after an update).
	Version string `json:"version,omitempty"`
	// Processes, L7 and DNS are deep collection (spec 2.9), filled when an
	// attribution backend runs (attr_method is not "off"). Every number
	// in them is a delta over the interval that ends at TS, so a lost
	// batch loses only its own interval and a replayed one (same Seq) is
	// ignored by the hub rather than counted twice. Absent (omitted) when
	// attribution is off; an old hub ignores them.
	Processes []ProcessTraffic `json:"processes,omitempty"`
	L7        []L7Observation  `json:"l7,omitempty"`
	DNS       []DNSObservation `json:"dns,omitempty"`
}

// UnattributedProcess is the Process of the row that holds the bytes the
// backend saw but could not tie to a process; its Reasons say why.
const UnattributedProcess = "(unattributed)"

// Reasons of unattributed traffic (UnattributedReason.Reason).
const (
	// ReasonNoSocket: no socket of this host matched the packet's
	// 5-tuple, typically a short-lived process gone before the lookup, or
	// traffic merely crossing the interface (forwarded, or for another
	// host).
	ReasonNoSocket = "socket not found"
	// ReasonProcessGone: the socket was found but no process held it any
	// more (or its owner could not be read).
	ReasonProcessGone = "process gone"
	// ReasonOtherNamespace: the traffic belongs to another network
	// namespace (a container behind a veth or bridge the agent captures
	// on), whose socket table this agent does not read.
	ReasonOtherNamespace = "other network namespace"
	// ReasonKernel: a socket owned by the kernel (no process), such as
	// a TIME_WAIT socket or a kernel thread's.
	ReasonKernel = "kernel socket"
	// ReasonNotIP: frames that are not IPv4/IPv6 TCP or UDP (ARP, ICMP,
	// other protocols, IP fragments), counted but not tied to sockets;
	// their bytes are the IP packet's length (the frame's for non-IP).
	ReasonNotIP = "not tcp/udp"
	// ReasonNotLocal: neither end of the packet is an address of this
	// host: traffic forwarded through it or addressed to another host.
	ReasonNotLocal = "not addressed to this host"
	// ReasonTableFull: the backend's flow table was full.
	ReasonTableFull = "flow table full"
	// ReasonLookupLimited: the lookup was skipped because the socket table
	// refresh is rate-limited and the cache had no entry yet.
	ReasonLookupLimited = "lookup rate-limited"
)

// ProcessTraffic is one process's traffic in the interval (spec 2.9
// process traffic item, per agent): bytes and packets in both directions,
// split by remote destination. Process "(unattributed)" (PID 0) carries
// the bytes no process could be found for, with Reasons.
type ProcessTraffic struct {
	// Process is the process name (comm on Linux), PID its process id;
	// one row per (process, pid).
	Process string `json:"process"`
	PID     int32  `json:"pid"`
	// BytesIn/BytesOut count link-layer bytes received/sent by the
	// process in the interval; PacketsIn/PacketsOut the packets.
	BytesIn    uint64 `json:"bytes_in"`
	BytesOut   uint64 `json:"bytes_out"`
	PacketsIn  uint64 `json:"packets_in"`
	PacketsOut uint64 `json:"packets_out"`
	// Remotes splits the traffic by remote destination (ip, port,
	// proto), most bytes first, at most MaxRemotes per process.
	Remotes []Remote `json:"remotes,omitempty"`
	// Reasons splits the "(unattributed)" row by why no process was
	// found; empty for other rows.
	Reasons []UnattributedReason `json:"reasons,omitempty"`
}

// MaxRemotes bounds ProcessTraffic.Remotes.
const MaxRemotes = 32

// Remote is one remote end of a process's traffic in the interval.
type Remote struct {
	// Proto is tcp or udp.
	Proto string `json:"proto"`
	// IP is the remote address (IPv4 dotted or IPv6), Port its port.
	IP         string `json:"ip"`
	Port       uint16 `json:"port"`
	BytesIn    uint64 `json:"bytes_in"`
	BytesOut   uint64 `json:"bytes_out"`
	PacketsIn  uint64 `json:"packets_in"`
	PacketsOut uint64 `json:"packets_out"`
}

// UnattributedReason is the part of the unattributed traffic with one
// reason (the Reason* constants).
type UnattributedReason struct {
	Reason  string `json:"reason"`
	Bytes   uint64 `json:"bytes"`
	Packets uint64 `json:"packets"`
}

// L7 kinds (L7Observation.Kind).
const (
	// KindTLS: the server name of a TLS ClientHello (SNI).
	KindTLS = "tls"
	// KindHTTP: the Host header of an HTTP/1.x request.
	KindHTTP = "http"
)

// L7Observation is one (host, kind, process, pid) seen in outgoing TCP in
// the interval (spec 2.9 L7 item, per agent).
type L7Observation struct {
	// Host is the SNI or HTTP Host (lower case, without port).
	Host string `json:"host"`
	// Kind is KindTLS or KindHTTP.
	Kind    string `json:"kind"`
	Process string `json:"process"`
	PID     int32  `json:"pid"`
	// Bytes counts the bytes, both directions, of the connections that
	// named Host, during the interval.
	Bytes uint64 `json:"bytes"`
	// Hits counts the ClientHellos or requests naming Host in the
	// interval.
	Hits uint64 `json:"hits"`
}

// DNSObservation is one (domain, process, pid) asked in the interval
// (spec 2.9 DNS item, per agent). Reverse lookups, .local and dotless
// names are never reported (spec 1).
type DNSObservation struct {
	// Domain is the query name, lower case, without the trailing dot.
	Domain  string `json:"domain"`
	Process string `json:"process"`
	PID     int32  `json:"pid"`
	// Queries counts the queries sent, Responses the answers received.
	Queries   uint64 `json:"queries"`
	Responses uint64 `json:"responses"`
}

// Interface holds an interface's cumulative counters since boot.
type Interface struct {
	Name      string `json:"name"`
	RxBytes   uint64 `json:"rx_bytes"`
	TxBytes   uint64 `json:"tx_bytes"`
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	// Addrs are the interface's addresses in CIDR ("192.0.2.10/24"), for
	// the topology's agent-to-device links by subnet. Added within
	// protocol_version 1: an old hub ignores it, an old agent omits it.
	// The hub keeps at most MaxAddrs valid prefixes per interface.
	Addrs []string `json:"addrs,omitempty"`
	// SpeedMbps is the link speed the OS reports (Linux:
	// /sys/class/net/<if>/speed), 0 when unknown. It lets the hub judge
	// iface_util on agents' interfaces. Added within protocol_version 1:
	// an old agent omits it (unknown), an old hub ignores it.
	SpeedMbps int64 `json:"speed_mbps,omitempty"`
}

// MaxAddrs is the most addresses the hub keeps of one interface.
const MaxAddrs = 16

// Connection is one socket of the agent's host.
type Connection struct {
	Proto      string `json:"proto"`
	LocalAddr  string `json:"local_addr"`
	RemoteAddr string `json:"remote_addr"`
	Status     string `json:"status"`
	PID        int32  `json:"pid"`
	Process    string `json:"process"`
}

// TelemetryResponse acknowledges a batch; Interval is the hub's current
// telemetry interval in seconds, which the agent adopts.
type TelemetryResponse struct {
	OK       bool `json:"ok"`
	Interval int  `json:"interval"`
	// PcapEnabled, when present, is the hub's current deep-collection
	// policy (-agent-pcap), the same value as in the hello answer. An
	// enrolled agent says hello only when it (re-)enrolls, so this is how
	// a changed policy reaches it: the agent applies it from its next
	// batch on. Absent (an older hub): the agent keeps the policy it
	// last learned.
	PcapEnabled *bool `json:"pcap_enabled,omitempty"`
}

// ErrorBody is the hub's error answer ({"error": "..."}).
type ErrorBody struct {
	Error string `json:"error"`
}
