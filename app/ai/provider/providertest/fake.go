// Package providertest runs fake language-model providers that speak
// the wire formats of app/ai/provider exactly (OpenAI Chat Completions,
// Anthropic Messages, Ollama /api/chat, llama.cpp's native /completion,
// and a bare OpenAI-compatible server), scriptable per test: chunks
// with delays, reasoning fields, <think> markup split across chunks,
// usage in the last chunk, an error mid-stream, a 429 with Retry-After,
// a slow first byte, a connection cut mid-stream. Each fake records the
// exact bytes of every request it received, so a test can grep what
// left the hub. No real cloud model can run in a test; these are the
// faithful stand-ins, built from the providers' published docs (see
// ../testdata/README.md).
package providertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Chunk is one write of a response body, flushed at once, after Delay.
type Chunk struct {
	Delay time.Duration
	Data  string
}

// Script is what a fake does with one chat request.
type Script struct {
	// Status is the response status (200 when 0).
	Status int
	// Header is added to the response (e.g. Retry-After).
	Header map[string]string
	// FirstByteDelay is waited before anything, headers included, is sent.
	FirstByteDelay time.Duration
	// Chunks are written in order, each flushed.
	Chunks []Chunk
	// Cut aborts the connection after the chunks, without the end of the
	// chunked body: the client sees the connection drop mid-stream.
	Cut bool
	// Hold keeps the response open after the chunks until the client
	// goes away (for cancellation and idle-timeout tests).
	Hold bool
}

// Request is one request as the fake received it.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the exact bytes received.
	Body []byte
}

// JSON decodes the body into a generic map (for asserting fields).
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Server is one fake provider.
type Server struct {
	// URL is the server's root, to be given as the provider's base URL.
	URL string
	// Kind is the provider kind it speaks ("cloud-a", … "compat").
	Kind string

	srv     *httptest.Server
	mu      sync.Mutex
	key     string
	models  []string
	scripts []Script
	reqs    []Request
	gone    chan time.Time
}

// New starts a fake of kind; it is closed when the test ends. Its model
// list is {"fake-small", "fake-large"} until SetModels.
func New(t testing.TB, kind string) *Server {
	t.Helper()
	switch kind {
	case "cloud-a", "cloud-b", "local-a", "local-b", "compat":
	default:
		t.Fatalf("providertest: unknown kind %q", kind)
	}
	s := &Server{Kind: kind, models: []string{"fake-small", "fake-large"}, gone: make(chan time.Time, 16)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// RequireKey makes the fake answer 401, in its format, to requests
// without key in the kind's auth header.
func (s *Server) RequireKey(key string) { s.mu.Lock(); s.key = key; s.mu.Unlock() }

// SetModels replaces the model list; a chat for a model not in a
// non-empty list answers 404 in the kind's format (llama.cpp serves
// its one loaded model and has no model field: not checked there).
func (s *Server) SetModels(names ...string) { s.mu.Lock(); s.models = names; s.mu.Unlock() }

// Push queues scripts, one per chat request; the last one repeats.
func (s *Server) Push(sc ...Script) { s.mu.Lock(); s.scripts = append(s.scripts, sc...); s.mu.Unlock() }

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Gone receives the time at which a chat response saw its client go
// away before the script was over.
func (s *Server) Gone() <-chan time.Time { return s.gone }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	key, models := s.key, s.models
	s.mu.Unlock()

	if key != "" && !s.authorized(r, key) {
		writeError(w, s.Kind, http.StatusUnauthorized, "invalid api key")
		return
	}
	route := r.Method + " " + r.URL.Path
	switch {
	case route == "GET "+s.modelsPath():
		writeJSON(w, modelList(s.Kind, models))
	case s.Kind == "local-b" && route == "POST /apply-template":
		var in struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		if json.Unmarshal(body, &in) != nil {
			writeError(w, s.Kind, http.StatusBadRequest, "bad json")
			return
		}
		writeJSON(w, map[string]string{"prompt": chatML(in.Messages)})
	case route == "POST "+s.chatPath():
		var in struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(body, &in) != nil {
			writeError(w, s.Kind, http.StatusBadRequest, "bad json")
			return
		}
		if s.Kind != "local-b" && len(models) > 0 && !contains(models, in.Model) {
			writeError(w, s.Kind, http.StatusNotFound, fmt.Sprintf("model %q not found", in.Model))
			return
		}
		s.play(w, r, s.next())
	default:
		writeError(w, s.Kind, http.StatusNotFound, "no route "+route)
	}
}

func (s *Server) authorized(r *http.Request, key string) bool {
	if s.Kind == "cloud-b" {
		return r.Header.Get("x-api-key") == key && r.Header.Get("anthropic-version") != ""
	}
	return r.Header.Get("Authorization") == "Bearer "+key
}

func (s *Server) chatPath() string {
	switch s.Kind {
	case "cloud-b":
		return "/v1/messages"
	case "local-a":
		return "/api/chat"
	case "local-b":
		return "/completion"
	}
	return "/v1/chat/completions"
}

func (s *Server) modelsPath() string {
	if s.Kind == "local-a" {
		return "/api/tags"
	}
	return "/v1/models"
}

func (s *Server) next() Script {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.scripts) == 0 {
		return Script{Chunks: Stream(s.Kind, Answer{Parts: []Part{{Text: "ok"}}, TokensIn: 1, TokensOut: 1})}
	}
	sc := s.scripts[0]
	if len(s.scripts) > 1 {
		s.scripts = s.scripts[1:]
	}
	return sc
}

// play writes a script, noticing a client that goes away.
func (s *Server) play(w http.ResponseWriter, r *http.Request, sc Script) {
	ctx := r.Context()
	wait := func(d time.Duration) bool {
		if d <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	goneNow := func() {
		select {
		case s.gone <- time.Now():
		default:
		}
	}
	if !wait(sc.FirstByteDelay) {
		goneNow()
		return
	}
	for k, v := range sc.Header {
		w.Header().Set(k, v)
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", contentType(s.Kind, sc.Status))
	}
	status := sc.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	for _, c := range sc.Chunks {
		if !wait(c.Delay) {
			goneNow()
			return
		}
		if _, err := io.WriteString(w, c.Data); err != nil {
			goneNow()
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
	if sc.Cut {
		// Aborting the handler makes net/http close the connection
		// without the chunked body's terminator: a cut, as seen on the wire.
		panic(http.ErrAbortHandler)
	}
	if sc.Hold {
		<-ctx.Done()
		goneNow()
	}
}

func contentType(kind string, status int) string {
	if status != 0 && status != http.StatusOK {
		return "application/json"
	}
	if kind == "local-a" {
		return "application/x-ndjson"
	}
	return "text/event-stream"
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// chatML renders messages the way a ChatML template does (Qwen, many
// GGUF models): what llama.cpp's /apply-template returns for them.
func chatML(msgs []struct{ Role, Content string }) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "<|im_start|>%s\n%s<|im_end|>\n", m.Role, m.Content)
	}
	b.WriteString("<|im_start|>assistant\n")
	return b.String()
}

// Close stops the fake now (it is also stopped when the test ends).
func (s *Server) Close() { s.srv.Close() }
