package geo

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"netmon/app/netguard"
)

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
		{"localhost resolves to loopback: refused", localhostURL, localhostURL, netguard.ErrBlocked},
		{"the configured address on another port: refused", "http://127.0.0.1:1/", target.URL, netguard.ErrBlocked},
		{"redirect to another host: not followed", redirector.URL, redirector.URL, netguard.ErrForeignRedirect},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			hits.Store(0)
			client, err := newGuardedClient(nil, tc.configured)
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

	g2, _ := startGeoWith(t, cfg, Deps{HTTPClient: f.srv.Client()})
	g2.Lookup(addr("8.8.8.8"))
	eventually(t, 5*time.Second, "answered through the given client", func() bool {
		_, _, ok := g2.Lookup(addr("8.8.8.8"))
		return ok
	})
}
