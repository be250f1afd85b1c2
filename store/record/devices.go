package record

// Network devices (spec 2.11): what the device pollers (collectors/snmp,
// collectors/fwrest) are given to poll and what one poll produced. The
// store keeps them; app/topology reads the neighbours.

// Device is a device to poll, credentials in clear (unsealed by the hub
// for the pollers only; never serialised to a client).
type Device struct {
	ID          int64
	Name        string
	Host        string // host or host:port; empty: an unmanaged node, never polled
	Kind        string
	Site        string
	SNMPVersion string // "1", "2c" or "3"
	PollSeconds int
	Enabled     bool

	Community   string
	V3User      string
	V3AuthProto string // SHA, SHA256, SHA512, MD5 ("" = noAuth)
	V3AuthPass  string
	V3PrivProto string // AES, AES256, DES ("" = noPriv)
	V3PrivPass  string

	// The firewall REST driver's fields (Vendor set).
	Vendor       string
	APIURL       string
	APIToken     string
	APIVerifyTLS bool
	VDOM         string
	Profile      string
}

// IfaceSample is one interface of one poll. Counters are the device's
// (64-bit where it has ifXTable); rates are bytes/s since the previous
// poll, 0 when there was none or a counter went backwards (reboot, wrap
// of a 32-bit counter is unwrapped once). RxUtil/TxUtil are nil unless
// the speed is trusted and the interface is oper-up.
type IfaceSample struct {
	DeviceID    int64    `json:"-"`
	TS          int64    `json:"ts"`
	IfIndex     int      `json:"if_index"`
	Name        string   `json:"name"`
	Alias       string   `json:"alias"`
	Class       string   `json:"class"`
	SpeedBps    uint64   `json:"speed_bps"`
	AdminUp     bool     `json:"admin_up"`
	OperUp      bool     `json:"oper_up"`
	InOctets    uint64   `json:"in_octets"`
	OutOctets   uint64   `json:"out_octets"`
	InErrors    uint64   `json:"in_errors"`
	OutErrors   uint64   `json:"out_errors"`
	InDiscards  uint64   `json:"in_discards"`
	OutDiscards uint64   `json:"out_discards"`
	RxBps       float64  `json:"rx_bps"`
	TxBps       float64  `json:"tx_bps"`
	RxUtilPct   *float64 `json:"rx_util_pct"`
	TxUtilPct   *float64 `json:"tx_util_pct"`
}

// ResourceSample is a device's CPU, memory and disk use in percent and
// its session count; nil where the device does not say.
type ResourceSample struct {
	DeviceID int64    `json:"-"`
	TS       int64    `json:"ts"`
	CPUPct   *float64 `json:"cpu_pct"`
	MemPct   *float64 `json:"mem_pct"`
	DiskPct  *float64 `json:"disk_pct"`
	Sessions *int64   `json:"sessions"`
}

// Neighbor is a link a device reported: an LLDP or CDP neighbour on one
// of its ports, or an ARP entry (an address seen on a port).
type Neighbor struct {
	Source     string // lldp, cdp, arp
	LocalPort  string // the device's own port name
	RemoteName string // sysName / device id of the neighbour ("" for arp)
	RemotePort string
	RemoteAddr string // management or ARP address
	RemoteMAC  string
}

// DevicePoll is the outcome of one poll of one device.
type DevicePoll struct {
	DeviceID  int64
	TS        int64
	Err       string // "" when the poll succeeded; then the rest is set
	SysName   string
	SysDescr  string
	SysObject string
	UptimeCS  uint32 // sysUpTime, centiseconds
	Ifaces    []IfaceSample
	Resources *ResourceSample
	Neighbors []Neighbor
	// Firewall is set by the REST driver only (nil for an SNMP poll).
	Firewall *FirewallPoll
}
