package fwrest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/collectors/fwrest/fwtest"
	"netmon/store/record"
)

func fixture(profile string) string {
	return filepath.Join("..", "..", "testdata", "fwrest", profile)
}

// TestPollEachProfile: every profile's fixture set is read whole, with
// the profile detected from the version, and requests to the device
// arrive at least 150 ms apart.
func TestPollEachProfile(t *testing.T) {
	for _, profile := range []string{"7.0", "7.2", "7.4", "7.6"} {
		t.Run(profile, func(t *testing.T) {
			srv := fwtest.Start(fixture(profile), "tok-"+profile)
			defer srv.Close()
			dev := record.Device{APIURL: srv.URL, APIToken: "tok-" + profile, APIVerifyTLS: false, Profile: "auto"}
			r, err := Probe(context.Background(), DefaultConfig(), Deps{}, dev)
			if err != nil {
				t.Fatal(err)
			}
			if r.Profile != profile || r.Hostname != "fw-edge-1" || r.Model != "FGVM64" || r.Serial != "FGVM0000TEST0001" || r.VDOMMode != "single" {
				t.Errorf("system: %+v", r)
			}
			if *r.CPUPct != 7 || *r.MemPct != 41 || *r.DiskPct != 12 || *r.Sessions != 1834 {
				t.Errorf("resources: %v %v %v %v", *r.CPUPct, *r.MemPct, *r.DiskPct, *r.Sessions)
			}
			got, _ := json.Marshal([]any{r.Ifaces, r.Tunnels, r.SSLUsers, r.Health, r.Policies})
			want := `[[{"name":"port1","alias":"WAN1","link":true,"speed_mbps":1000,"rx_bytes":987654321,"tx_bytes":123456789,"rx_errors":0,"tx_errors":1},` +
				`{"name":"port2","alias":"\u003cimg src=x onerror=alert(1)\u003e","link":false,"speed_mbps":0,"rx_bytes":0,"tx_bytes":0,"rx_errors":0,"tx_errors":0}],` +
				`[{"vdom":"root","name":"to-hq","remote_gw":"203.0.113.10","status":"up","uptime_sec":86400,"in_bytes":5000,"out_bytes":7000},` +
				`{"vdom":"root","name":"to-branch","remote_gw":"198.51.100.20","status":"down","uptime_sec":0,"in_bytes":0,"out_bytes":0}],` +
				`[{"vdom":"root","user":"alice","remote_host":"192.0.2.44","login_time":1764000000}],` +
				`[{"vdom":"root","name":"dns-check","member":"port1","status":"up","latency_ms":12.5,"jitter_ms":0.8,"loss_pct":0},` +
				`{"vdom":"root","name":"dns-check","member":"port3","status":"down","latency_ms":0,"jitter_ms":0,"loss_pct":100}],` +
				`[{"vdom":"root","policy_id":1,"hit_count":450,"bytes":4096000,"packets":3200,"active_sessions":12},` +
				`{"vdom":"root","policy_id":7,"hit_count":0,"bytes":0,"packets":0,"active_sessions":0}]]`
			if string(got) != want {
				t.Errorf("collected:\n got %s\nwant %s", got, want)
			}
			if strings.Join(r.Caps, ",") != "status,resources,interfaces,vpn_ipsec,vpn_ssl,sdwan,policies" {
				t.Errorf("caps %v", r.Caps)
			}
			times, paths := srv.Requests()
			if len(times) != 7 || paths[0] != "/api/v2/monitor/system/status" {
				t.Fatalf("requests %v", paths)
			}
			for i := 1; i < len(times); i++ {
				if gap := times[i].Sub(times[i-1]); gap < 150*time.Millisecond {
					t.Errorf("request %d came %v after the previous one; want at least 150 ms", i, gap)
				}
			}
		})
	}
}

// TestTLSAndToken: a self-signed device is refused unless
// api_verify_tls=false; a wrong token is a 401 said as such.
func TestTLSAndToken(t *testing.T) {
	srv := fwtest.Start(fixture("7.4"), "right")
	defer srv.Close()
	_, err := Probe(context.Background(), DefaultConfig(), Deps{}, record.Device{APIURL: srv.URL, APIToken: "right", APIVerifyTLS: true})
	if err == nil || !strings.Contains(err.Error(), "TLS: the device's certificate is not trusted (self-signed? set api_verify_tls=false to accept it)") {
		t.Errorf("verify on: %v", err)
	}
	if _, paths := srv.Requests(); len(paths) != 0 {
		t.Errorf("a request reached the device over an untrusted connection: %v", paths)
	}
	r, err := Probe(context.Background(), DefaultConfig(), Deps{}, record.Device{APIURL: srv.URL, APIToken: "wrong", APIVerifyTLS: false})
	if err == nil || err.Error() != "/api/v2/monitor/system/status: 401: the API token was refused" || r.Endpoints[0].HTTPCode != 401 || !r.Endpoints[0].Connectivity {
		t.Errorf("wrong token: %v %+v", err, r.Endpoints)
	}
	if _, err := NewClient(DefaultConfig(), Deps{}, record.Device{APIURL: "http://fw.example.test"}); err == nil {
		t.Error("an http:// api_url was accepted")
	}
}

func TestProfileOf(t *testing.T) {
	for in, want := range map[string]string{"v7.0.12": "7.0", "v7.2.8": "7.2", "v7.4.4": "7.4", "v7.6.0": "7.6", "v6.4.9": "default", "": "default", "7.4": "7.4"} {
		if got := ProfileOf(in); got != want {
			t.Errorf("ProfileOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzDecodeEnvelopes(f *testing.F) {
	for _, s := range []string{`{"status":"success","results":{}}`, `[{"vdom":"root","results":[]}]`, `{"status":"error"}`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		envs, err := decodeEnvelopes(b)
		if err == nil && envs == nil {
			t.Error("no error and no envelope")
		}
	})
}
