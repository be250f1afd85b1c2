package hub

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"netmon/app/api"
	"netmon/app/config"
	"netmon/collectors/fwrest/fwtest"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestFirewallScheduledPoll: a firewall REST device created through the
// API is picked up by the scheduled poller (its token opened from the
// vault, its connection through the guard made for its api_url) and
// its series answer on the routes; another site's caller gets 404s.
// Both databases.
func TestFirewallScheduledPoll(t *testing.T) {
	fw := fwtest.Start(filepath.Join("..", "..", "testdata", "fwrest", "7.6"), "fw-token")
	defer fw.Close()
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		var dev api.DeviceItem
		boot.call("POST", "/api/v1/devices", map[string]any{"name": "fw-paris", "kind": "firewall", "site": "a", "vendor": "fwvendor",
			"api_url": fw.URL, "api_token": "fw-token", "api_verify_tls": false, "poll_seconds": 60}).must(t, 200).decode(t, &dev)
		// The create refreshed the schedule; poll now rather than wait
		// for the device's phase in its 60 s interval.
		if !h.devices.PollDevice(context.Background(), dev.ID) {
			t.Fatal("the firewall device is not scheduled")
		}
		var list []api.DeviceItem
		boot.call("GET", "/api/v1/devices", nil).must(t, 200).decode(t, &list)
		if len(list) != 1 || list[0].LastError != "" || list[0].SysName != "fw-edge-1" || list[0].APIProfile != "7.6" || list[0].APIVersion != "v7.6.0" ||
			list[0].APICaps != "status,resources,interfaces,vpn_ipsec,vpn_ssl,sdwan,policies" || list[0].Vendor != "fwvendor" {
			t.Errorf("device = %+v", list)
		}
		var vpn []record.VPNSample
		boot.call("GET", fmt.Sprintf("/api/v1/devices/%d/vpn?minutes=5", dev.ID), nil).must(t, 200).decode(t, &vpn)
		if len(vpn) != 3 || vpn[0].Kind != "ipsec" || vpn[0].Name != "to-branch" || vpn[0].Status != "down" || vpn[1].Name != "to-hq" ||
			vpn[1].InBytes != 5000 || vpn[2].Kind != "ssl" || vpn[2].Name != "alice" {
			t.Errorf("vpn = %+v", vpn)
		}
		var sd []record.SDWANSample
		boot.call("GET", fmt.Sprintf("/api/v1/devices/%d/sdwan?minutes=5", dev.ID), nil).must(t, 200).decode(t, &sd)
		if len(sd) != 2 || sd[0].Member != "port1" || sd[0].LatencyMS != 12.5 || sd[0].JitterMS != 0.8 || sd[1].LossPct != 100 {
			t.Errorf("sdwan = %+v", sd)
		}
		var pol []record.PolicyDelta
		boot.call("GET", fmt.Sprintf("/api/v1/devices/%d/policies?minutes=5", dev.ID), nil).must(t, 200).decode(t, &pol)
		if len(pol) != 2 || pol[0].PolicyID != 1 || pol[0].HitCount != 450 || pol[0].ActiveSessions != 12 || pol[0].Hits != 0 {
			t.Errorf("policies = %+v", pol)
		}
		var res []record.ResourceSample
		boot.call("GET", fmt.Sprintf("/api/v1/devices/%d/resources?minutes=5", dev.ID), nil).must(t, 200).decode(t, &res)
		if len(res) != 1 || *res[0].Sessions != 1834 {
			t.Errorf("resources = %+v", res)
		}
		// The poller's metrics are on /metrics: this one poll, its seven
		// requests, no error.
		metrics := boot.call("GET", "/metrics", nil).must(t, 200).body
		for _, want := range []string{`netmon_device_polls_total{driver="fwrest",result="ok"} 1`, `netmon_device_polls_total{driver="fwrest",result="error"} 0`,
			`netmon_fwrest_requests_total{endpoint="status"} 1`, `netmon_fwrest_requests_total{endpoint="policies"} 1`,
			`netmon_fwrest_request_errors_total{reason="guard"} 0`, `netmon_fwrest_request_errors_total{reason="tls"} 0`,
			`netmon_devices{driver="fwrest"} 1`, `netmon_devices{driver="snmp"} 0`, `netmon_device_poll_duration_seconds_count{driver="fwrest"} 1`, "# TYPE netmon_fwrest_pacing_wait_seconds_total counter"} {
			if !strings.Contains(metrics, "\n"+want+"\n") {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		// The alert rules read the latest poll.
		st, _ := h.devices.FirewallStates(context.Background())
		if len(st) != 1 || st[0].DeviceID != dev.ID || st[0].Site != "a" || len(st[0].Tunnels) != 2 || st[0].Tunnels[0].Up != true || st[0].Tunnels[1].Up ||
			len(st[0].Health) != 2 || *st[0].Sessions != 1834 {
			t.Errorf("firewall states = %+v", st)
		}

		boot.createUser("netb", "long-enough-1", "netops", "b")
		nb := h.client(t)
		nb.login("netb", "long-enough-1")
		for _, p := range []string{"/vpn", "/sdwan", "/policies"} {
			nb.call("GET", fmt.Sprintf("/api/v1/devices/%d%s?minutes=5", dev.ID, p), nil).must(t, 404)
		}
	})
}
