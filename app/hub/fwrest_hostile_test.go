package hub

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"netmon/app/api"
	"netmon/collectors/fwrest/fwtest"
	"netmon/store/storetest"
)

// TestFirewallHostileAnswersKeepTheHubUp (issue 28 item 1, RELIABILITY
// case 33): three firewall devices answer `[]`, null and {} on every
// monitor endpoint. The old driver indexed envs[0] of `[]` in the poll
// goroutine and took the hub down (a crash loop); now each poll is that
// device's last_error, saying what was wrong, counted as a decode error
// on /metrics, and the hub goes on answering. Both databases.
func TestFirewallHostileAnswersKeepTheHubUp(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn)
		want := map[string]string{}
		for _, body := range []string{`[]`, `null`, `{}`} {
			fw := fwtest.Start(filepath.Join("..", "..", "testdata", "fwrest", "7.6"), "fw-token")
			defer fw.Close()
			for _, p := range []string{"system/status", "system/resource/usage", "system/interface", "vpn/ipsec", "vpn/ssl", "virtual-wan/health-check", "firewall/policy"} {
				fw.Answer("/api/v2/monitor/"+p, fwtest.Body(body))
			}
			var dev api.DeviceItem
			boot.call("POST", "/api/v1/devices", map[string]any{"name": "fw " + body, "kind": "firewall", "vendor": "fwvendor",
				"api_url": fw.URL, "api_token": "fw-token", "api_verify_tls": false, "poll_seconds": 60}).must(t, 200).decode(t, &dev)
			// The scheduler's call, now rather than at the device's phase.
			if !h.devices.PollDevice(context.Background(), dev.ID) {
				t.Fatal("the firewall device is not scheduled")
			}
			want[dev.Name] = "/api/v2/monitor/system/status: not a firewall API response: " + map[string]string{
				`[]`: "an empty array (no virtual domain answered)", `null`: "answer: want an object, got null", `{}`: `no status "success"`}[body]
		}
		if r := boot.call("GET", "/healthz", nil); r.code != 200 {
			t.Fatalf("/healthz after the polls: %d %s", r.code, r.body)
		}
		var list []api.DeviceItem
		boot.call("GET", "/api/v1/devices", nil).must(t, 200).decode(t, &list)
		if len(list) != 3 {
			t.Fatalf("%d devices", len(list))
		}
		for _, d := range list {
			if d.LastError != want[d.Name] || d.LastPoll == 0 || d.SysName != "" {
				t.Errorf("%s: last_error %q (want %q), last_poll %d, sys_name %q", d.Name, d.LastError, want[d.Name], d.LastPoll, d.SysName)
			}
		}
		metrics := boot.call("GET", "/metrics", nil).must(t, 200).body
		for _, w := range []string{`netmon_fwrest_request_errors_total{reason="decode"} 3`, `netmon_device_polls_total{driver="fwrest",result="error"} 3`,
			`netmon_device_polls_total{driver="fwrest",result="ok"} 0`, `netmon_panics_total{component="fwrest"} 0`} {
			if !strings.Contains(metrics, "\n"+w+"\n") {
				t.Errorf("/metrics lacks %s", w)
			}
		}
	})
}

// TestProbeEchoesNothingOfAnotherService (issue 28 item 9): the REST
// probe names any HTTPS service by address; its answer is classified
// (connectivity, HTTP code, records, format, the driver's own error
// words) and carries nothing of that service's JSON, whatever shape it
// takes, even one dressed as the monitor API.
func TestProbeEchoesNothingOfAnotherService(t *testing.T) {
	const secret = "AKIAIOSFODNN7SECRET"
	for _, tc := range []struct{ desc, body, wantErr string }{
		{"a JSON API", `{"access_token":"` + secret + `","user":{"password":"` + secret + `"}}`, `no status "success"`},
		{"a status of its own", `{"status":"` + secret + `","results":{}}`, `the device answered a status other than "success"`},
		{"dressed as the monitor API", `{"status":"success","version":"` + secret + `","serial":"` + secret + `","results":{"hostname":"` + secret + `","model":"` + secret + `"}}`, "no firmware version"},
		{"a list", `[{"secret":"` + secret + `"}]`, `no status "success"`},
		{"a type error on a key of its own", `{"status":"success","version":"v7.0.1","serial":"ABCD1234","results":{"hostname":{"` + secret + `":1}}}`, "hostname: want a string, got an object"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("X-Secret", secret)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			_, boot := bootstrap(t, storetestSQLite(t))
			r := boot.call("POST", "/api/v1/devices/probe", map[string]any{"name": "x", "vendor": "fwvendor", "api_url": srv.URL, "api_token": "t",
				"api_verify_tls": false}).must(t, 200)
			if strings.Contains(r.body, secret) || strings.Contains(r.body, "access_token") || strings.Contains(r.body, "password") {
				t.Errorf("the probe answer carries the service's text: %s", r.body)
			}
			var rep api.ProbeReport
			r.decode(t, &rep)
			wantErr := "/api/v2/monitor/system/status: not a firewall API response: " + tc.wantErr
			if rep.OK || rep.Error != wantErr || rep.Version != "" || rep.SysName != "" || len(rep.Endpoints) != 1 ||
				rep.Endpoints[0] != (api.ProbeEndpoint{Endpoint: "status", Connectivity: true, HTTPCode: 200, Records: 0, Format: "json", Error: wantErr}) {
				t.Errorf("probe = %+v", rep)
			}
		})
	}
}
