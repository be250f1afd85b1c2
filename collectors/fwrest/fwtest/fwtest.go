// Package fwtest serves a fixture set of testdata/fwrest over TLS (a
// self-signed certificate) in the fwvendor monitor API's wire format,
// for the tests of collectors/fwrest and the hub's probe.
package fwtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Server is a running fixture device.
type Server struct {
	*httptest.Server
	Token string
	mu    sync.Mutex
	times []time.Time
	paths []string
}

// Start serves dir (a profile directory) requiring bearer token.
func Start(dir, token string) *Server {
	s := &Server{Token: token}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.times = append(s.times, time.Now())
		s.paths = append(s.paths, r.URL.RequestURI())
		s.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, "/api/v2/monitor/")
		if !ok || strings.Contains(rest, "..") {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, strings.ReplaceAll(rest, "/", "_")+".json"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	return s
}

// Requests returns the arrival times and request URIs so far.
func (s *Server) Requests() ([]time.Time, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times...), append([]string(nil), s.paths...)
}
