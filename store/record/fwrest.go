package record

// The firewall REST driver's series (collectors/fwrest; spec 2.11, 4.8):
// what one poll of a fwvendor device adds to its interface and resource
// samples. The JSON names are the routes' fields
// (GET /api/v1/devices/{id}/vpn|sdwan|policies).

// FirewallPoll is the REST-only part of one poll.
type FirewallPoll struct {
	Profile  string // the profile used (auto resolved): api_profile
	Version  string // the version the device reports: api_version
	Caps     string // the endpoints that answered, comma-separated: api_caps
	VPN      []VPNSample
	SDWAN    []SDWANSample
	Policies []PolicySample
}

// VPNSample is an IPsec tunnel (kind ipsec) or a connected SSL VPN user
// (kind ssl) at one poll.
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

// SDWANSample is one member of one SD-WAN health check at one poll.
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

// PolicySample is a firewall policy's cumulative counters at one poll.
type PolicySample struct {
	TS             int64  `json:"ts"`
	VDOM           string `json:"vdom"`
	PolicyID       int64  `json:"policy_id"`
	HitCount       uint64 `json:"hit_count"`
	Bytes          uint64 `json:"bytes"`
	Packets        uint64 `json:"packets"`
	ActiveSessions uint64 `json:"active_sessions"`
}

// PolicyDelta is a policy's activity over a window: counter growth
// between its first and last sample in the window (a counter that went
// backwards, a reset, counts from zero), and its latest active sessions.
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
