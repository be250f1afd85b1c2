package fwrest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/app/netguard"
	"netmon/collectors/fwrest/fwtest"
	"netmon/store/record"
)

// pollLog is a Writer keeping the polls in memory: these tests are about
// the counters, the stored rows are TestScheduledPollStores'.
type pollLog struct {
	mu    sync.Mutex
	polls []record.DevicePoll
}

func (w *pollLog) SaveDevicePoll(_ context.Context, p record.DevicePoll) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.polls = append(w.polls, p)
	return nil
}

// endpointOf names a logged request URI as the metrics do.
func endpointOf(uri string) string {
	path, _, _ := strings.Cut(uri, "?")
	return map[string]string{pathStatus: "status", pathResources: "resources", pathIfaces: "interfaces", pathIPsec: "vpn_ipsec",
		pathSSL: "vpn_ssl", pathSDWAN: "sdwan", pathPolicies: "policies"}[path]
}

// fixtureCopy copies a profile's fixture set, then changes files
// (content "" removes the file).
func fixtureCopy(t *testing.T, profile string, change map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(fixture(profile))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(fixture(profile), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := change[e.Name()]; ok {
			if c == "" {
				continue
			}
			b = []byte(c)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestPollMetrics: one scheduled poll of a device, and the exact counts
// it leaves: the poll by result, one request per endpoint tried (what
// the fixture device logged, except where the request never reached
// it), each failed request under its reason, one duration sample, the
// device gauge. Every other series stays 0.
func TestPollMetrics(t *testing.T) {
	all := map[string]float64{"status": 1, "resources": 1, "interfaces": 1, "vpn_ipsec": 1, "vpn_ssl": 1, "sdwan": 1, "policies": 1}
	statusOnly := map[string]float64{"status": 1}
	tests := []struct {
		desc string
		// device starts what the device's api_url points at; srv is nil
		// when no fixture device logs the requests.
		device     func(t *testing.T) (apiURL string, srv *fwtest.Server)
		token      string
		verifyTLS  bool
		cfg        func(*Config)
		deps       Deps
		wantResult string
		wantReqs   map[string]float64
		wantErrs   map[string]float64
		unsent     bool // the requests never reached the device: it logged none
		noPoll     bool // no client was made: no request, no duration
	}{
		{desc: "every endpoint answers", token: "tok", wantResult: "ok", wantReqs: all},
		{desc: "wrong token: 401 on the status endpoint", token: "wrong", wantResult: "error", wantReqs: statusOnly,
			wantErrs: map[string]float64{reasonHTTPStatus: 1}},
		{desc: "self-signed certificate refused", token: "tok", verifyTLS: true, wantResult: "error", wantReqs: statusOnly,
			wantErrs: map[string]float64{reasonTLS: 1}, unsent: true},
		{desc: "one endpoint missing (404): the poll still succeeds",
			device: func(t *testing.T) (string, *fwtest.Server) {
				srv := fwtest.Start(fixtureCopy(t, "7.4", map[string]string{"virtual-wan_health-check.json": ""}), "tok")
				t.Cleanup(srv.Close)
				return srv.URL, srv
			},
			token: "tok", wantResult: "ok", wantReqs: all, wantErrs: map[string]float64{reasonHTTPStatus: 1}},
		{desc: "one answer not JSON",
			device: func(t *testing.T) (string, *fwtest.Server) {
				srv := fwtest.Start(fixtureCopy(t, "7.4", map[string]string{"system_resource_usage.json": `{"status":"success","results":`}), "tok")
				t.Cleanup(srv.Close)
				return srv.URL, srv
			},
			token: "tok", wantResult: "ok", wantReqs: all, wantErrs: map[string]float64{reasonDecode: 1}},
		{desc: "status answer over MaxBody", token: "tok", cfg: func(c *Config) { c.MaxBody = 100 }, wantResult: "error", wantReqs: statusOnly,
			wantErrs: map[string]float64{reasonTooLarge: 1}},
		{desc: "device never answers: timeout",
			device: func(t *testing.T) (string, *fwtest.Server) {
				stuck := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
				t.Cleanup(stuck.Close)
				return stuck.URL, nil
			},
			token: "tok", cfg: func(c *Config) { c.Timeout = 200 * time.Millisecond }, wantResult: "error", wantReqs: statusOnly,
			wantErrs: map[string]float64{reasonTimeout: 1}},
		{desc: "nothing listens: refused",
			device: func(t *testing.T) (string, *fwtest.Server) {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := l.Addr().String()
				l.Close()
				return "https://" + addr, nil
			},
			token: "tok", wantResult: "error", wantReqs: statusOnly, wantErrs: map[string]float64{reasonRefused: 1}},
		{desc: "outbound guard refuses the address", token: "tok",
			// A guard not made for the device's api_url: loopback is not
			// granted, so the dial is refused before it connects.
			deps:       Deps{Transport: netguard.New(netguard.DefaultConfig()).Transport(netguard.ClientOptions{})},
			wantResult: "error", wantReqs: statusOnly, wantErrs: map[string]float64{reasonGuard: 1}, unsent: true},
		{desc: "api_url not https: no client, no request",
			device: func(*testing.T) (string, *fwtest.Server) { return "http://192.0.2.1", nil },
			token:  "tok", wantResult: "error", noPoll: true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			device := tt.device
			if device == nil {
				device = func(t *testing.T) (string, *fwtest.Server) {
					srv := fwtest.Start(fixture("7.4"), "tok")
					t.Cleanup(srv.Close)
					return srv.URL, srv
				}
			}
			apiURL, srv := device(t)
			cfg := DefaultConfig()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			dev := record.Device{ID: 1, Vendor: "fwvendor", APIURL: apiURL, APIToken: tt.token, APIVerifyTLS: tt.verifyTLS, Profile: "auto", Enabled: true}
			reg := prometheus.NewPedanticRegistry()
			w := &pollLog{}
			p := NewDriver(cfg, tt.deps, reg)
			s := p.Open()
			defer s.Close()
			_ = pollSave(t, s, dev, w)

			if len(w.polls) != 1 || (w.polls[0].Err == "") != (tt.wantResult == "ok") {
				t.Fatalf("stored polls %+v; want one, result %s", w.polls, tt.wantResult)
			}
			var logged map[string]float64
			if srv != nil {
				logged = map[string]float64{}
				_, uris := srv.Requests()
				for _, u := range uris {
					logged[endpointOf(u)]++
				}
			}
			var sent float64
			for _, e := range endpointNames {
				got := testutil.ToFloat64(p.m.requests.WithLabelValues(e))
				if got != tt.wantReqs[e] {
					t.Errorf("requests_total{endpoint=%q} = %v, want %v", e, got, tt.wantReqs[e])
				}
				if logged != nil && !tt.unsent && logged[e] != got {
					t.Errorf("requests_total{endpoint=%q} = %v, but the device logged %v", e, got, logged[e])
				}
				sent += got
			}
			if tt.unsent && srv != nil {
				if _, uris := srv.Requests(); len(uris) != 0 {
					t.Errorf("the device logged %v; want nothing", uris)
				}
			}
			for _, r := range errorReasons {
				if got := testutil.ToFloat64(p.m.errors.WithLabelValues(r)); got != tt.wantErrs[r] {
					t.Errorf("request_errors_total{reason=%q} = %v, want %v", r, got, tt.wantErrs[r])
				}
			}
			// Each request after the first waited at most the spacing.
			pacing := testutil.ToFloat64(p.m.pacing)
			if pacing < 0 || pacing > (max(sent, 1)-1)*cfg.Spacing.Seconds() || (sent > 1 && pacing == 0) {
				t.Errorf("pacing_wait_seconds_total = %v after %v requests", pacing, sent)
			}
			// Every series is registered, labelled ones pre-created: 7
			// endpoints, 8 reasons and the pacing counter (polls, their
			// duration and the device gauge are the device component's).
			if n, err := testutil.GatherAndCount(reg); err != nil || n != 7+8+1 {
				t.Errorf("gathered %d series (%v), want 16", n, err)
			}
		})
	}
}

// TestPacingMetric: the pacing counter is the sum of the waits the
// spacing imposed, exactly (the client's sleep is recorded on a second
// poll of the same client, whose first request may wait too).
func TestPacingMetric(t *testing.T) {
	srv := fwtest.Start(fixture("7.4"), "tok")
	defer srv.Close()
	dev := record.Device{ID: 1, Vendor: "fwvendor", APIURL: srv.URL, APIToken: "tok", Profile: "auto", Enabled: true}
	p := NewDriver(DefaultConfig(), Deps{}, nil)
	s := p.Open()
	defer s.Close()
	_ = pollSave(t, s, dev, &pollLog{})
	first := testutil.ToFloat64(p.m.pacing)
	var waits []time.Duration
	s.client.sleep = func(d time.Duration) {
		waits = append(waits, d)
		time.Sleep(d)
	}
	_ = pollSave(t, s, dev, &pollLog{})
	// Summed in the counter's order, from its value before: the same
	// float additions, so the same value to the last bit.
	sum := first
	for _, d := range waits {
		sum += d.Seconds()
	}
	if len(waits) < 6 || len(waits) > 7 {
		t.Errorf("%d waits in a 7-request poll; want 6 or 7", len(waits))
	}
	if got := testutil.ToFloat64(p.m.pacing); got != sum || sum <= first {
		t.Errorf("pacing = %v; %v before plus the waits is %v", got, first, sum)
	}
	if got := testutil.ToFloat64(p.m.requests.WithLabelValues("status")); got != 2 {
		t.Errorf("requests_total{endpoint=\"status\"} = %v after two polls", got)
	}
}
