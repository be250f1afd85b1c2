package rules

import (
	"reflect"
	"testing"
)

func sessions(n int64) *int64 { return &n }

// TestEvalFirewall: each firewall rule's threshold, keys, severities and
// messages, exactly; thresholds at 0 are off.
func TestEvalFirewall(t *testing.T) {
	st := []FirewallState{{DeviceID: 4, Name: "fw-edge-1", Site: "paris",
		Tunnels: []TunnelState{{VDOM: "root", Name: "to-hq", Up: true}, {VDOM: "root", Name: "to-branch", Up: false}},
		Health: []HealthState{
			{VDOM: "root", Name: "dns-check", Member: "port1", Up: true, LatencyMS: 12.5, JitterMS: 0.8, LossPct: 0},
			{VDOM: "root", Name: "dns-check", Member: "port2", Up: true, LatencyMS: 180, JitterMS: 3, LossPct: 0.5},
			{VDOM: "root", Name: "dns-check", Member: "port3", Up: false, LossPct: 100},
		},
		Sessions: sessions(1834)}}
	tests := []struct {
		desc string
		cfg  FirewallConfig
		want []Alert
	}{
		{desc: "everything off", cfg: FirewallConfig{}, want: nil},
		{desc: "vpn_down on", cfg: FirewallConfig{VPNDown: true}, want: []Alert{
			{Kind: "vpn_down", Key: "4|root/to-branch", Severity: 8, Site: "paris", Message: "IPsec tunnel to-branch (vdom root) of fw-edge-1 (device 4) is down"}}},
		{desc: "latency 150 ms", cfg: FirewallConfig{LatencyMS: 150}, want: []Alert{
			{Kind: "sdwan_sla_breach", Key: "4|root/dns-check/port2", Severity: 6, Site: "paris", Message: "SD-WAN health check dns-check member port2 (vdom root) of fw-edge-1 (device 4): latency 180.0 ms >= 150.0 ms"},
			{Kind: "sdwan_sla_breach", Key: "4|root/dns-check/port3", Severity: 6, Site: "paris", Message: "SD-WAN health check dns-check member port3 (vdom root) of fw-edge-1 (device 4): member down"}}},
		{desc: "latency at the threshold breaches; jitter and loss under theirs do not", cfg: FirewallConfig{LatencyMS: 180, JitterMS: 3.5, LossPct: 1}, want: []Alert{
			{Kind: "sdwan_sla_breach", Key: "4|root/dns-check/port2", Severity: 6, Site: "paris", Message: "SD-WAN health check dns-check member port2 (vdom root) of fw-edge-1 (device 4): latency 180.0 ms >= 180.0 ms"},
			{Kind: "sdwan_sla_breach", Key: "4|root/dns-check/port3", Severity: 6, Site: "paris", Message: "SD-WAN health check dns-check member port3 (vdom root) of fw-edge-1 (device 4): member down"}}},
		{desc: "jitter", cfg: FirewallConfig{JitterMS: 3}, want: []Alert{
			{Kind: "sdwan_sla_breach", Key: "4|root/dns-check/port2", Severity: 6, Site: "paris", Message: "SD-WAN health check dns-check member port2 (vdom root) of fw-edge-1 (device 4): jitter 3.0 ms >= 3.0 ms"},
			{Kind: "sdwan_sla_breach", Key: "4|root/dns-check/port3", Severity: 6, Site: "paris", Message: "SD-WAN health check dns-check member port3 (vdom root) of fw-edge-1 (device 4): member down"}}},
		{desc: "sessions under max", cfg: FirewallConfig{MaxSessions: 1835}, want: nil},
		{desc: "sessions at max", cfg: FirewallConfig{MaxSessions: 1834}, want: []Alert{
			{Kind: "high_sessions", Key: "4", Severity: 5, Site: "paris", Message: "fw-edge-1 (device 4) has 1834 sessions (>= 1834)"}}},
	}
	for _, tc := range tests {
		got := EvalFirewall(st, tc.cfg, nil)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.desc, got, tc.want)
		}
	}
	// A device without a session count is not judged by high_sessions.
	if got := EvalFirewall([]FirewallState{{DeviceID: 1}}, FirewallConfig{MaxSessions: 1}, nil); len(got) != 0 {
		t.Errorf("no session count: %+v", got)
	}
}
