package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
)

// TestIdentityFailsClosed: a handler that asks for a kind of caller its
// route's class does not set gets a logged 500, never a default (admin)
// identity.
func TestIdentityFailsClosed(t *testing.T) {
	tests := []struct {
		desc string
		perm router.Perm
		read func(c *gin.Context) string
	}{
		{"user identity on a public route", router.Public, func(c *gin.Context) string { return string(callerOf(c).Role) }},
		{"user identity on an enroll route", router.EnrollToken, func(c *gin.Context) string { return string(callerOf(c).Role) }},
		{"agent on a public route", router.Public, func(c *gin.Context) string { return agentOf(c).Name }},
		{"agent on a user route", router.Session, func(c *gin.Context) string { return agentOf(c).Name }},
		{"enroll token on a user route", router.Session, enrollTokenOf},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			var got string
			ran := false
			s, logs := newTestServer(t, &fakePinger{}, func(s *Server) []router.Route {
				return []router.Route{{Method: http.MethodPost, Path: "/api/test/whoami", OperationID: "testWhoami", Summary: "who", Tag: "test", Perm: tt.perm,
					Do: router.Raw(func(c *gin.Context) { got = tt.read(c); ran = true; c.String(200, got) },
						router.Response{Status: 200, ContentType: "text/plain", Description: "the caller"})}}
			})
			w := do(t, s.Handler(), request{method: "POST", url: "/api/test/whoami", header: map[string]string{"X-Enroll-Token": "ent_x"}})
			if w.Code != 500 || ran || got != "" {
				t.Fatalf("status %d, handler went on: %v, caller %q: want 500 and no caller", w.Code, ran, got)
			}
			if !strings.Contains(logs.String(), `"msg":"bug: route without identity"`) {
				t.Errorf("the bug was not logged:\n%s", logs)
			}
		})
	}
}

// TestNoAuthServiceIsRefused: without an auth service the API does not
// build, rather than serving everyone as admin.
func TestNoAuthServiceIsRefused(t *testing.T) {
	if _, err := New(nil, DefaultConfig(), Deps{}); err == nil || !strings.Contains(err.Error(), "no auth service") {
		t.Fatalf("New without Deps.Auth: err = %v, want a refusal", err)
	}
}

// TestEnrollRouteNeedsTheHeader: an EnrollToken route refuses a request
// without X-Enroll-Token before its handler runs, and hands the token to
// the handler otherwise.
func TestEnrollRouteNeedsTheHeader(t *testing.T) {
	var got string
	s, _ := newTestServer(t, &fakePinger{}, func(s *Server) []router.Route {
		return []router.Route{{Method: http.MethodPost, Path: "/api/test/enroll", OperationID: "testEnroll", Summary: "enroll", Tag: "test", Perm: router.EnrollToken,
			Do: router.Raw(func(c *gin.Context) { got = enrollTokenOf(c); c.String(200, got) },
				router.Response{Status: 200, ContentType: "text/plain", Description: "the token"})}}
	})
	w := do(t, s.Handler(), request{method: "POST", url: "/api/test/enroll"})
	if w.Code != 401 || got != "" || !strings.Contains(w.Body.String(), "X-Enroll-Token") {
		t.Fatalf("without the header: status %d body %s, handler saw %q", w.Code, w.Body, got)
	}
	w = do(t, s.Handler(), request{method: "POST", url: "/api/test/enroll", header: map[string]string{"X-Enroll-Token": " ent_abc "}})
	if w.Code != 200 || got != "ent_abc" {
		t.Fatalf("with the header: status %d, handler saw %q", w.Code, got)
	}
}
