package api

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestIdentityFailsClosed: a handler that asks for the caller's identity
// on a route whose class sets none gets a 500, not an admin identity.
func TestIdentityFailsClosed(t *testing.T) {
	var got string
	s, logs := newTestServer(t, &fakePinger{}, func(s *Server) []Route {
		return []Route{{Method: http.MethodGet, Path: "/api/test/whoami", OperationID: "testWhoami", Summary: "who", Tag: "test", Perm: Public,
			Do: Raw(func(c *gin.Context) { got = string(identity(c).Role); c.String(200, got) }, Response{Status: 200, ContentType: "text/plain", Description: "the role"})},
			{Method: http.MethodGet, Path: "/api/test/whichagent", OperationID: "testWhichAgent", Summary: "which agent", Tag: "test", Perm: Public,
				Do: Raw(func(c *gin.Context) { got = agentOf(c).Name; c.String(200, got) }, Response{Status: 200, ContentType: "text/plain", Description: "the agent"})}}
	})
	w := do(t, s.Handler(), request{method: "GET", url: "/api/test/whoami"})
	if w.Code != 500 || got != "" {
		t.Fatalf("status %d, role %q: want 500 and no identity", w.Code, got)
	}
	if !strings.Contains(logs.String(), "asked for the caller's identity") {
		t.Error("the bug was not logged")
	}
	if w := do(t, s.Handler(), request{method: "GET", url: "/api/test/whichagent"}); w.Code != 500 || got != "" {
		t.Fatalf("agent on a route without one: status %d, agent %q", w.Code, got)
	}
}
