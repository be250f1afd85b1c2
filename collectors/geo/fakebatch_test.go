package geo

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// fakeBatch is an online batch service speaking ip-api.com's wire
// format: POST of a JSON array of address strings, answered by a JSON
// array of {status, query, countryCode, as} or {status:"fail", message,
// query}. It records every request.
type fakeBatch struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	known    map[string]answer              // answers by address; others fail
	respond  func(n int) (int, http.Header) // status and headers of request n (0-based); nil = 200
	requests [][]string
	times    []time.Time
	bad      []string // non-global addresses received: must stay empty
}

func newFakeBatch(t *testing.T) *fakeBatch {
	f := &fakeBatch{t: t, known: make(map[string]answer)}
	f.srv = httptest.NewServer(f)
	t.Cleanup(f.srv.Close)
	t.Cleanup(func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.bad) > 0 {
			t.Errorf("non-global addresses were sent to the online service: %v", f.bad)
		}
	})
	return f
}

// url is the batch URL on 127.0.0.1: an IP literal, so the guarded
// client may connect to it.
func (f *fakeBatch) url() string { return f.srv.URL + "/batch?fields=status,query,countryCode,as" }

func (f *fakeBatch) set(ip, country, as string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.known[ip] = answer{Status: "success", Query: ip, CountryCode: country, AS: as}
}

func (f *fakeBatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var ips []string
	if err := json.NewDecoder(r.Body).Decode(&ips); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, ips)
	f.times = append(f.times, time.Now())
	status, header := http.StatusOK, http.Header{}
	if f.respond != nil {
		status, header = f.respond(n)
	}
	out := make([]answer, 0, len(ips))
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err != nil || !isGlobal(a) {
			f.bad = append(f.bad, ip)
		}
		a, ok := f.known[ip]
		if !ok {
			a = answer{Status: "fail", Message: "reserved range", Query: ip}
		}
		out = append(out, a)
	}
	f.mu.Unlock()
	for k, v := range header {
		w.Header()[k] = v
	}
	if status != http.StatusOK {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// log returns a copy of the requests and their arrival times.
func (f *fakeBatch) log() ([][]string, []time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.requests...), append([]time.Time(nil), f.times...)
}

func (f *fakeBatch) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

// onlineConfig is an online-only configuration against f (Dir missing).
func onlineConfig(t *testing.T, url string) Config {
	cfg := DefaultConfig()
	cfg.Dir = t.TempDir() + "/none"
	cfg.OnlineURL = url
	cfg.BatchInterval = 50 * time.Millisecond
	cfg.ReloadInterval = 0
	return cfg
}
