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
	over  map[string]http.HandlerFunc
}

// Answer makes the device answer the monitor path (as
// "/api/v2/monitor/system/status") with h instead of its fixture: the
// hostile answers of the tests (`[]`, null, an endless body).
func (s *Server) Answer(path string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.over == nil {
		s.over = map[string]http.HandlerFunc{}
	}
	s.over[path] = h
}

// Body is a handler answering 200 with body as JSON.
func Body(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}
}

// Start serves dir (a profile directory) requiring bearer token.
func Start(dir, token string) *Server {
	s := &Server{Token: token}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.times = append(s.times, time.Now())
		s.paths = append(s.paths, r.URL.RequestURI())
		h := s.over[r.URL.Path]
		s.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if h != nil {
			h(w, r)
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
