package geo

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestDialGuard(t *testing.T) {
	tests := []struct {
		desc string
		url  string // the configured OnlineURL
		addr string // the resolved address and port dialled
		ok   bool
	}{
		{"public address", "http://ip-api.com/batch", "208.95.112.1:80", true},
		{"public IPv6", "http://ip-api.com/batch", "[2606:4700::1]:80", true},
		{"loopback behind a name", "http://ip-api.com/batch", "127.0.0.1:80", false},
		{"IPv6 loopback behind a name", "http://ip-api.com/batch", "[::1]:80", false},
		{"private behind a name (DNS rebinding)", "http://ip-api.com/batch", "10.0.0.5:80", false},
		{"192.168 behind a name", "http://ip-api.com/batch", "192.168.1.1:80", false},
		{"ULA behind a name", "http://ip-api.com/batch", "[fd00::5]:80", false},
		{"link-local behind a name", "http://ip-api.com/batch", "169.254.1.1:80", false},
		{"metadata behind a name", "http://ip-api.com/batch", "169.254.169.254:80", false},
		{"CGNAT behind a name", "http://ip-api.com/batch", "100.64.0.1:80", false},
		{"mapped loopback behind a name", "http://ip-api.com/batch", "[::ffff:127.0.0.1]:80", false},
		{"unspecified", "http://ip-api.com/batch", "0.0.0.0:80", false},
		{"localhost is a name: no permission", "http://localhost:8080/batch", "127.0.0.1:8080", false},
		{"explicit loopback literal", "http://127.0.0.1:8080/batch", "127.0.0.1:8080", true},
		{"explicit literal allows that address only", "http://127.0.0.1:8080/batch", "127.0.0.2:8080", false},
		{"explicit literal does not allow another family", "http://127.0.0.1:8080/batch", "[::1]:8080", false},
		{"explicit private literal", "http://10.1.2.3/batch", "10.1.2.3:80", true},
		{"explicit IPv6 literal", "http://[fd00::53]:80/batch", "[fd00::53]:80", true},
		{"explicit literal allows its port only", "http://127.0.0.1:8080/batch", "127.0.0.1:22", false},
		{"default port of https", "https://10.1.2.3/batch", "10.1.2.3:443", true},
		{"explicit literal still allows public", "http://10.1.2.3/batch", "8.8.8.8:80", true},
		{"metadata is refused even when named", "http://169.254.169.254/latest", "169.254.169.254:80", false},
		{"IPv6 metadata is refused even when named", "http://[fd00:ec2::254]/", "[fd00:ec2::254]:80", false},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			g, err := newDialGuard(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			err = g.check(netip.MustParseAddrPort(tc.addr))
			if (err == nil) != tc.ok {
				t.Errorf("check(%s) with URL %s = %v, want allowed=%v", tc.addr, tc.url, err, tc.ok)
			}
			if err != nil && !errors.Is(err, errBlockedAddress) {
				t.Errorf("error %v is not errBlockedAddress", err)
			}
		})
	}
	for _, bad := range []string{"ftp://ip-api.com/", "file:///etc/passwd", "://x", "http://10.0.0.1:99999/"} {
		if _, err := newDialGuard(bad); err == nil {
			t.Errorf("newDialGuard(%q) accepted", bad)
		}
	}
}

// TestGuardedClient runs the default client against real listeners on
// 127.0.0.1; no connection leaves the machine.
func TestGuardedClient(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	localhostURL := strings.Replace(target.URL, "127.0.0.1", "localhost", 1)

	tests := []struct {
		desc       string
		configured string // OnlineURL the client is built for
		get        string
		wantErr    error
	}{
		{"configured literal reaches it", target.URL, target.URL, nil},
		{"localhost resolves to loopback: refused", localhostURL, localhostURL, errBlockedAddress},
		{"the configured address on another port: refused", "http://127.0.0.1:1/", target.URL, errBlockedAddress},
		{"redirect to another host: not followed", redirector.URL, redirector.URL, errForeignRedirect},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			hits.Store(0)
			client, err := newGuardedClient(tc.configured)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Get(tc.get)
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Get(%s) error %v, want %v", tc.get, err, tc.wantErr)
			}
			if n := hits.Load(); tc.wantErr != nil && n != 0 {
				t.Errorf("the refused target was reached %d times", n)
			}
		})
	}
}

// TestOnlineGuard: with the default client, an OnlineURL naming a host
// that resolves to a non-global address is never contacted; given an
// HTTPClient, the caller's choice stands.
func TestOnlineGuard(t *testing.T) {
	f := newFakeBatch(t)
	f.set("8.8.8.8", "US", "AS15169 Google LLC")
	byName := strings.Replace(f.url(), "127.0.0.1", "localhost", 1)

	cfg := onlineConfig(t, byName)
	g, reg := startGeo(t, cfg)
	g.Lookup(addr("8.8.8.8"))
	eventually(t, 5*time.Second, "a refused batch", func() bool {
		return metricValue(t, reg, "netmon_geo_online_batches_total", "result", "error") >= 1
	})
	if n := f.count(); n != 0 {
		t.Errorf("the service behind localhost got %d requests", n)
	}
	if _, _, ok := g.Lookup(addr("8.8.8.8")); ok {
		t.Error("answered without a request")
	}

	cfg.HTTPClient = f.srv.Client()
	g2, _ := startGeo(t, cfg)
	g2.Lookup(addr("8.8.8.8"))
	eventually(t, 5*time.Second, "answered through the given client", func() bool {
		_, _, ok := g2.Lookup(addr("8.8.8.8"))
		return ok
	})
}
