package router

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

type reqKey struct{}

// TestHandlerContextOutlivesTheRequest: the c a handler gets stays its own
// request's context after the handler returned and the engine served
// other requests, as database/sql and the SQLite driver need (they read
// their context from goroutines that may run after the call returned).
// gin's pooled Context, which the adapters handed out before, is reset
// and given the next request's Request once the handler returns: what the
// stored c reported here then was the last request's value (and, under
// go test -race, a data race with gin's reset).
func TestHandlerContextOutlivesTheRequest(t *testing.T) {
	var kept []context.Context
	keep := func(c *gin.Context) { kept = append(kept, c) }
	routes := []Route{
		{Method: http.MethodGet, Path: "/json", Do: JSON(func(c *gin.Context, _ *NoInput) (string, error) {
			keep(c)
			return "ok", nil
		})},
		{Method: http.MethodGet, Path: "/rawin", Do: RawIn(func(c *gin.Context, _ *NoInput) error {
			keep(c)
			c.String(http.StatusOK, "ok")
			return nil
		})},
		{Method: http.MethodGet, Path: "/raw", Do: Raw(func(c *gin.Context) {
			keep(c)
			c.Header("X-Kept", "1") // the copy writes to the request's response
			c.String(http.StatusOK, "ok")
		})},
	}
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.ContextWithFallback = true // as the server sets it
	Register(e, routes, func(Route) []gin.HandlerFunc { return nil }, testFail)

	const rounds = 5
	var cancels []context.CancelFunc
	for i := range rounds {
		for _, p := range []string{"/json", "/rawin", "/raw"} {
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), reqKey{}, fmt.Sprint(p, i)))
			cancels = append(cancels, cancel)
			w := httptest.NewRecorder()
			e.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil).WithContext(ctx))
			if w.Code != http.StatusOK || w.Body.String() != `ok` && w.Body.String() != `"ok"` {
				t.Fatalf("%s: %d %q", p, w.Code, w.Body.String())
			}
			if p == "/raw" && w.Header().Get("X-Kept") != "1" {
				t.Fatalf("%s: header X-Kept %q, want 1", p, w.Header().Get("X-Kept"))
			}
		}
	}
	if len(kept) != 3*rounds {
		t.Fatalf("%d handler calls, want %d", len(kept), 3*rounds)
	}
	// Cancel one request: only its kept context is done.
	cancels[4]()
	for j, c := range kept {
		p := []string{"/json", "/rawin", "/raw"}[j%3]
		if got, want := c.Value(reqKey{}), fmt.Sprint(p, j/3); got != want {
			t.Errorf("call %d: kept context's value %v, want %v", j, got, want)
		}
		if done := c.Err() != nil; done != (j == 4) {
			t.Errorf("call %d: kept context done %v, want %v", j, done, j == 4)
		}
	}
	for _, cancel := range cancels {
		cancel()
	}
}
