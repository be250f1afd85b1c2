package capture

import "net/netip"

// Snapshot is the capture snapshot of spec section 2.1: GET /api/status
// and the `stats` of every WebSocket tick.
type Snapshot struct {
	Running bool   `json:"running"`
	Device  string `json:"device"`
	// Error is always sent, "" when the capture loop has none: spec 2.1
	// lists it and clients test it without a presence check.
	Error        string           `json:"error"`
	TotalPackets int64            `json:"total_packets"`
	TotalBytes   int64            `json:"total_bytes"`
	Dropped      int64            `json:"dropped"`
	BpsIn        float64          `json:"bps_in"`
	BpsOut       float64          `json:"bps_out"`
	BpsLocal     float64          `json:"bps_local"`
	PPS          int64            `json:"pps"`
	Protocols    map[string]int64 `json:"protocols"`
	TopEndpoints []Endpoint       `json:"top_endpoints"`
	TopPorts     []Port           `json:"top_ports"`
	TopDomains   []Domain         `json:"top_domains"`
	History      []Bucket         `json:"history"`
}

// Endpoint is a remote or local address seen in the capture.
type Endpoint struct {
	IP       string `json:"ip"`
	Hostname string `json:"hostname"`
	Local    bool   `json:"local"`
	Country  string `json:"country"`
	ASN      string `json:"asn"`
	In       int64  `json:"in"`    // bytes it sent (received by this host)
	Out      int64  `json:"out"`   // bytes sent to it
	Total    int64  `json:"total"` // In + Out; local traffic counts in both
	Packets  int64  `json:"packets"`
}

// Port is a transport port seen in the capture, with its service name.
type Port struct {
	Port    int    `json:"port"`
	Name    string `json:"name"`
	Bytes   int64  `json:"bytes"`
	Packets int64  `json:"packets"`
}

// Domain is a DNS name seen in queries or responses.
type Domain struct {
	Domain    string   `json:"domain"`
	Queries   int64    `json:"queries"`
	Responses int64    `json:"responses"`
	IPs       []string `json:"ips"` // at most 4
}

// Bucket is one second of traffic (bytes; packets).
type Bucket struct {
	TS      int64 `json:"ts"`
	In      int64 `json:"in"`
	Out     int64 `json:"out"`
	Local   int64 `json:"local"`
	Packets int64 `json:"packets"`
}

// Enricher gives the country (ISO 3166 alpha-2) and ASN ("AS15169") of
// an address; collectors/geo implements it. It must not block: an
// unknown address answers ok=false (and may be looked up in the
// background).
type Enricher interface {
	Lookup(addr netip.Addr) (country, asn string, ok bool)
}
