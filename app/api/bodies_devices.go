package api

import (
	"netmon/store"
	"netmon/store/record"
)

// The device series and alert delivery bodies: API copies of store rows,
// field for field (see bodies.go for why), with the JSON names and
// schema text the API served before.

// InterfaceRate is a point of GET /api/v1/devices/{id}/interfaces/{ifindex}/history
// (store.IfaceRate).
type InterfaceRate struct {
	TS        int64    `json:"ts"`
	OperUp    bool     `json:"oper_up"`
	RxBps     float64  `json:"rx_bps"`
	TxBps     float64  `json:"tx_bps"`
	RxUtilPct *float64 `json:"rx_util_pct"`
	TxUtilPct *float64 `json:"tx_util_pct"`
}

// ResourceSample is a point of a device's CPU, memory, disk and sessions
// (record.ResourceSample).
type ResourceSample struct {
	DeviceID int64    `json:"-"`
	TS       int64    `json:"ts"`
	CPUPct   *float64 `json:"cpu_pct"`
	MemPct   *float64 `json:"mem_pct"`
	DiskPct  *float64 `json:"disk_pct"`
	Sessions *int64   `json:"sessions"`
}

// VPNSample is a tunnel or SSL-VPN user at one poll (record.VPNSample).
type VPNSample struct {
	TS        int64  `json:"ts"`
	Kind      string `json:"kind" jsonschema:"enum=ipsec,enum=ssl"`
	VDOM      string `json:"vdom"`
	Name      string `json:"name" jsonschema:"description=tunnel name (ipsec) or user name (ssl)"`
	Remote    string `json:"remote" jsonschema:"description=remote gateway (ipsec) or the user's address (ssl)"`
	Status    string `json:"status" jsonschema:"enum=up,enum=down,description=ipsec: up when a phase 2 selector is up; ssl: always up (a listed user is connected)"`
	UptimeSec int64  `json:"uptime_sec" jsonschema:"description=ipsec: seconds since the tunnel came up; ssl: seconds since login at the poll"`
	InBytes   uint64 `json:"in_bytes"`
	OutBytes  uint64 `json:"out_bytes"`
}

// SDWANSample is an SD-WAN health-check member at one poll
// (record.SDWANSample).
type SDWANSample struct {
	TS        int64   `json:"ts"`
	VDOM      string  `json:"vdom"`
	Name      string  `json:"name" jsonschema:"description=health-check name"`
	Member    string  `json:"member" jsonschema:"description=member interface"`
	Status    string  `json:"status" jsonschema:"description=up, down (as the device says)"`
	LatencyMS float64 `json:"latency_ms"`
	JitterMS  float64 `json:"jitter_ms"`
	LossPct   float64 `json:"loss_pct"`
}

// PolicyDelta is a firewall policy's growth over the window
// (record.PolicyDelta).
type PolicyDelta struct {
	VDOM           string `json:"vdom"`
	PolicyID       int64  `json:"policy_id"`
	Hits           uint64 `json:"hits" jsonschema:"description=hit count growth in the window"`
	Bytes          uint64 `json:"bytes" jsonschema:"description=byte growth in the window"`
	Packets        uint64 `json:"packets" jsonschema:"description=packet growth in the window"`
	ActiveSessions uint64 `json:"active_sessions" jsonschema:"description=at the latest sample"`
	HitCount       uint64 `json:"hit_count" jsonschema:"description=the device's cumulative hit count at the latest sample"`
	LastTS         int64  `json:"last_ts"`
}

// AlertDelivery is one routed delivery of an alert event
// (record.AlertDelivery); Error is one of notify's public reasons.
type AlertDelivery struct {
	ID        int64             `json:"id"`
	EventID   int64             `json:"event_id"`
	Channel   string            `json:"channel"`
	Route     string            `json:"route"`
	Status    string            `json:"status"`
	Attempts  int               `json:"attempts"`
	CreatedTS int64             `json:"created_ts"`
	NextTS    int64             `json:"next_ts"`
	UpdatedTS int64             `json:"updated_ts"`
	Error     string            `json:"error"`
	Event     record.AlertEvent `json:"-"`
}

func ifaceRateOf(r store.IfaceRate) InterfaceRate       { return InterfaceRate(r) }
func resourceOf(r record.ResourceSample) ResourceSample { return ResourceSample(r) }
func vpnOf(r record.VPNSample) VPNSample                { return VPNSample(r) }
func sdwanOf(r record.SDWANSample) SDWANSample          { return SDWANSample(r) }
func policyOf(r record.PolicyDelta) PolicyDelta         { return PolicyDelta(r) }
func deliveryOf(r record.AlertDelivery) AlertDelivery   { return AlertDelivery(r) }
