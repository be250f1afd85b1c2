package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHealthz is the full middleware chain (request id, metrics,
// access log at a disabled level, headers) plus the JSON handler, in
// process: the per-request cost the hub adds on top of net/http.
func BenchmarkHealthz(b *testing.B) {
	s, err := New(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})), DefaultConfig(), Deps{DB: &fakePinger{}, Auth: openAccounts{}})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatal(w.Code)
			}
		}
	})
}
