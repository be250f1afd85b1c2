package fwrest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/collectors/fwrest/fwtest"
	"netmon/store/record"
)

var monitorPaths = map[string]string{"status": pathStatus, "resources": pathResources, "interfaces": pathIfaces,
	"vpn_ipsec": pathIPsec, "vpn_ssl": pathSSL, "sdwan": pathSDWAN, "policies": pathPolicies}

// fastConfig keeps the spacing tiny: these tests make many polls.
func fastConfig() Config {
	c := DefaultConfig()
	c.Spacing = time.Millisecond
	return c
}

// TestPollHostileAnswers: a device answering `[]`, null or {} on any
// endpoint fails that endpoint with the reason (and the poll when it is
// the status endpoint), counted as a decode error; the other endpoints
// are still read. The old driver panicked on `[]` (envs[0]).
func TestPollHostileAnswers(t *testing.T) {
	for _, body := range []string{`[]`, `null`, `{}`} {
		for _, ep := range endpointNames {
			t.Run(body+"/"+ep, func(t *testing.T) {
				srv := fwtest.Start(fixture("7.6"), "tok")
				defer srv.Close()
				srv.Answer(monitorPaths[ep], fwtest.Body(body))
				c, err := NewClient(fastConfig(), Deps{}, record.Device{APIURL: srv.URL, APIToken: "tok"})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.m = newMetrics(prometheus.NewRegistry())
				r, err := c.Poll(context.Background())
				want := map[string]string{`[]`: "an empty array (no virtual domain answered)", `null`: "answer: want an object, got null", `{}`: `no status "success"`}[body]
				wantErr := monitorPaths[ep] + ": not a firewall API response: " + want
				var got string
				for _, e := range r.Endpoints {
					if e.Endpoint == ep {
						got = e.Error
						if e.HTTPCode != 200 || !e.Connectivity || e.Records != 0 {
							t.Errorf("endpoint %+v", e)
						}
					}
				}
				if got != wantErr {
					t.Errorf("endpoint error %q, want %q", got, wantErr)
				}
				if ep == "status" {
					var de *DecodeError
					if !errors.As(err, &de) || err.Error() != wantErr || len(r.Endpoints) != 1 {
						t.Errorf("poll error %v, endpoints %d", err, len(r.Endpoints))
					}
				} else if err != nil || len(r.Endpoints) != 7 || len(r.Caps) != 6 || strings.Contains(strings.Join(r.Caps, ","), ep) || r.Hostname != "fw-edge-1" {
					t.Errorf("poll: %v, caps %v", err, r.Caps)
				}
				if n := testutil.ToFloat64(c.m.errors.WithLabelValues(reasonDecode)); n != 1 {
					t.Errorf("decode errors counted %v, want 1", n)
				}
			})
		}
	}
}

// TestPollOversizeAndSlow: a body over MaxBody is cut and refused
// (too_large), a device that answers headers and then trickles its body
// forever is cut at the request timeout (timeout): each costs that
// endpoint, not the poll or the process.
func TestPollOversizeAndSlow(t *testing.T) {
	srv := fwtest.Start(fixture("7.6"), "tok")
	defer srv.Close()
	stop := make(chan struct{})
	defer close(stop)
	big := []byte(`{"status":"success","results":{"a":"` + strings.Repeat("x", 9<<20) + `"}}`) // 9 MiB
	srv.Answer(pathIfaces, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(big) })
	srv.Answer(pathIPsec, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"status":"success","results":[`))
		w.(http.Flusher).Flush()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				_, _ = w.Write([]byte(`{},`))
				w.(http.Flusher).Flush()
			}
		}
	})
	cfg := fastConfig()
	cfg.Timeout = 2 * time.Second
	c, err := NewClient(cfg, Deps{}, record.Device{APIURL: srv.URL, APIToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.m = newMetrics(prometheus.NewRegistry())
	r, err := c.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	errs := map[string]string{}
	for _, e := range r.Endpoints {
		errs[e.Endpoint] = e.Error
	}
	if errs["interfaces"] != pathIfaces+": answer over 8388608 bytes" {
		t.Errorf("oversize: %q", errs["interfaces"])
	}
	if !strings.HasPrefix(errs["vpn_ipsec"], pathIPsec+": read:") || !strings.Contains(errs["vpn_ipsec"], "Client.Timeout") {
		t.Errorf("endless: %q", errs["vpn_ipsec"])
	}
	if errs["policies"] != "" || len(r.Caps) != 5 {
		t.Errorf("the other endpoints: %v, caps %v", errs, r.Caps)
	}
	if a, b := testutil.ToFloat64(c.m.errors.WithLabelValues(reasonTooLarge)), testutil.ToFloat64(c.m.errors.WithLabelValues(reasonTimeout)); a != 1 || b != 1 {
		t.Errorf("too_large %v, timeout %v; want 1 and 1", a, b)
	}
}
