package api

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/errs"
	"netmon/app/fleet"
	"netmon/app/logging"
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

// closedAccounts is an auth service with authentication on and no valid
// credential anywhere.
type closedAccounts struct{ openAccounts }

func (closedAccounts) Required(context.Context) (bool, error) { return true, nil }

// noAgents is a fleet that knows no agent.
type noAgents struct{ Fleet }

func (noAgents) Authenticate(context.Context, string, int64) (fleet.AgentRef, error) {
	return fleet.AgentRef{}, errs.Unauthorizedf("unknown agent")
}

// TestEveryRouteWithoutCredentials walks THE table with authentication on
// and no credentials: every route but the public ones answers 401 (the
// spec's exact body for user routes) before its handler runs; no route
// answers 5xx or lets the caller through on a default identity.
func TestEveryRouteWithoutCredentials(t *testing.T) {
	var logs bytes.Buffer
	log, _ := logging.New(&logs, "json", "debug")
	s, err := New(log, DefaultConfig(), Deps{DB: &fakePinger{}, Auth: closedAccounts{}, Fleet: noAgents{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Routes() {
		path := strings.ReplaceAll(r.Path, "{id}", "1")
		w := do(t, s.Handler(), request{method: r.Method, url: path, body: "{}"})
		switch {
		case r.Perm == router.Public:
			if w.Code == 401 || w.Code == 403 || w.Code >= 500 {
				t.Errorf("%s %s (public): %d %s", r.Method, r.Path, w.Code, w.Body)
			}
		case r.Perm.UserPerm():
			if w.Code != 401 || strings.TrimSpace(w.Body.String()) != `{"error":"oturum gerekli","auth_required":true,"message":"session required"}` {
				t.Errorf("%s %s (%s): %d %s, want the spec's 401", r.Method, r.Path, r.Perm, w.Code, w.Body)
			}
		default: // AG, EN
			if w.Code != 401 {
				t.Errorf("%s %s (%s): %d %s, want 401", r.Method, r.Path, r.Perm, w.Code, w.Body)
			}
		}
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("errors logged:\n%s", logs.String())
	}
}
