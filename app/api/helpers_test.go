package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"netmon/app/api/router"
	"netmon/app/auth"
	"netmon/app/errs"
	"netmon/app/logging"
	"netmon/ui"
)

// openAccounts is an auth service with authentication off: every caller
// is the open admin. Only the Authenticator part is implemented; the
// handlers' methods (nil embedded interface) are not called by these
// tests.
type openAccounts struct{ Accounts }

func (openAccounts) Authenticate(context.Context, auth.Credentials) (*auth.Identity, error) {
	return nil, auth.ErrUnauthenticated
}
func (openAccounts) Required(context.Context) (bool, error) { return false, nil }
func (openAccounts) OpenIdentity() *auth.Identity {
	return &auth.Identity{Username: "admin", Role: auth.RoleAdmin, Actor: auth.ActorLegacy, Open: true}
}
func (openAccounts) MultiSite() bool                                                 { return false }
func (openAccounts) Denied(context.Context, *auth.Identity, auth.Permission, string) {}

// fakePinger stands in for the database in unit tests of the handlers;
// the real database, up and down, is exercised by app/hub's tests.
type fakePinger struct{ err error }

func (p *fakePinger) Ping(context.Context) error { return p.err }

// newTestServer builds a server with the real table plus extra routes,
// logging JSON into the returned buffer.
func newTestServer(t *testing.T, db Pinger, extra func(*Server) []router.Route) (*Server, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	log, err := logging.New(&buf, "json", "debug")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Version = "test"
	cfg.BodyLimit = 1024
	s, err := build(log, cfg, Deps{DB: db, UI: ui.New(ui.Config{}), Auth: openAccounts{}}, func(s *Server) []router.Route {
		routes := s.routeTable()
		if extra != nil {
			routes = append(routes, extra(s)...)
		}
		return routes
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, &buf
}

type request struct {
	method, url, body string
	header            map[string]string
	tls               bool // the request arrived over TLS
}

func do(t *testing.T, h http.Handler, r request) *httptest.ResponseRecorder {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, r.url, body)
	req.RemoteAddr = "127.0.0.1:40000"
	if r.tls {
		req.TLS = &tls.ConnectionState{HandshakeComplete: true}
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// Types and routes used only by the tests of the binder and middleware.
// The bodies are aliases of unnamed structs, inlined in the document, so
// the production table of schema names need not list them.

type itemsIn struct {
	ID      int64 `path:"id" min:"1" doc:"item id"`
	Minutes int   `query:"minutes" min:"1" max:"10080" default:"60" doc:"window in minutes"`
}

type itemsOut = struct {
	ID      int64 `json:"id"`
	Minutes int   `json:"minutes"`
}

type createIn struct {
	Body createBody `body:"json"`
}

type createBody = struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func testRoutes(s *Server) []router.Route {
	return []router.Route{
		{Method: http.MethodGet, Path: "/api/test/items/{id}", OperationID: "testItems", Tag: "test", Perm: router.View,
			Summary: "binder test <script>alert(1)</script>",
			Do: router.JSON(func(_ *gin.Context, in *itemsIn) (itemsOut, error) {
				return itemsOut(*in), nil
			})},
		{Method: http.MethodPost, Path: "/api/test/items", OperationID: "testCreate", Tag: "test", Perm: router.Operate,
			Summary: "body test",
			Do: router.JSON(func(c *gin.Context, in *createIn) (createBody, error) {
				if in.Body.Name == "conflict" {
					return createBody{}, errs.Conflictf("item %q exists", in.Body.Name)
				}
				if in.Body.Name == "fail" {
					return createBody{}, errors.New("disk on fire")
				}
				if in.Body.Name == "panic" {
					panic("boom")
				}
				s.log.InfoContext(c, "item created", "name", in.Body.Name)
				return in.Body, nil
			})},
	}
}

// doChunked sends the body with unknown length, as a streaming client does.
func doChunked(t *testing.T, h http.Handler, r request) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(r.method, r.url, io.MultiReader(strings.NewReader(r.body)))
	req.ContentLength = -1
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func (openAccounts) SignIn(context.Context) (bool, bool, error) { return false, false, nil }
