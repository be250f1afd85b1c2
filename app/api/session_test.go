package api

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/app/auth"
	"netmon/app/logging"
	"netmon/ui"
)

// signedAccounts is an auth service with authentication on, in which any
// bearer is id (none: not signed in).
type signedAccounts struct {
	openAccounts
	id        *auth.Identity
	multiSite bool
}

func (a signedAccounts) Authenticate(context.Context, auth.Credentials) (*auth.Identity, error) {
	if a.id == nil {
		return nil, auth.ErrUnauthenticated
	}
	return a.id, nil
}
func (signedAccounts) Required(context.Context) (bool, error) { return true, nil }
func (a signedAccounts) MultiSite() bool                      { return a.multiSite }

// TestAuthStatusPermissions: /api/auth/status carries the caller's
// permissions, whether its role is read-only and the assignable roles,
// all from app/auth, so the console copies no rule of the matrix.
func TestAuthStatusPermissions(t *testing.T) {
	single := []string{"admin", "netops", "auditor", "analyst", "viewer"}
	multi := []string{"global-admin", "admin", "site-admin", "netops", "auditor", "analyst", "viewer"}
	tests := []struct {
		desc     string
		accounts Accounts
		bearer   bool
		want     AuthStatus
	}{
		{"authentication off: the open admin, global-admin included in single-site mode", openAccounts{}, false,
			AuthStatus{Required: false, Permissions: []string{"view", "operate", "analyze", "devices", "agents", "admin", "audit", "global-admin"}, Roles: single}},
		{"not signed in: no permission", signedAccounts{}, false,
			AuthStatus{Required: true, Permissions: []string{}, Roles: single}},
		{"the auditor reads and changes nothing", signedAccounts{id: &auth.Identity{Username: "eve", Role: auth.RoleAuditor, Actor: auth.ActorUser}}, true,
			AuthStatus{Required: true, Authenticated: true, User: &StatusUser{Username: "eve", Role: "auditor", ActorType: "user"},
				Permissions: []string{"view", "audit"}, ReadOnly: true, Roles: single}},
		{"netops", signedAccounts{id: &auth.Identity{Username: "nick", Role: auth.RoleNetOps, Actor: auth.ActorToken}}, true,
			AuthStatus{Required: true, Authenticated: true, User: &StatusUser{Username: "nick", Role: "netops", ActorType: "token"},
				Permissions: []string{"view", "operate", "analyze", "devices"}, Roles: single}},
		{"a multi-site admin is no global-admin", signedAccounts{id: &auth.Identity{Username: "ann", Role: auth.RoleAdmin, Actor: auth.ActorUser, Site: "paris"}, multiSite: true}, true,
			AuthStatus{Required: true, Authenticated: true, MultiSite: true, User: &StatusUser{Username: "ann", Role: "admin", Site: "paris", ActorType: "user"},
				Permissions: []string{"view", "operate", "analyze", "devices", "agents", "admin", "audit"}, Roles: multi}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Version = "test"
			var logs bytes.Buffer
			log, err := logging.New(&logs, "json", "debug")
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(log, cfg, Deps{DB: &fakePinger{}, UI: ui.New(ui.Config{}), Auth: tt.accounts, LoopbackOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			r := request{method: "GET", url: "/api/auth/status"}
			if tt.bearer {
				r.header = map[string]string{"Authorization": "Bearer bnt_test"}
			}
			w := do(t, s.Handler(), r)
			if w.Code != 200 {
				t.Fatalf("status %d: %s\n%s", w.Code, w.Body, logs.String())
			}
			var got AuthStatus
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}
