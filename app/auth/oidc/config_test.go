package oidc

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidate(t *testing.T) {
	ok := Config{
		Issuer:      "https://idp.example/realms/netmon",
		ClientID:    "netmon",
		RedirectURL: "https://hub.example/api/auth/oidc/callback",
		GroupRoles:  map[string]string{"ops": "netops"},
		DefaultRole: "analyst",
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"SSO off needs nothing", func(c *Config) { *c = Config{ClientID: "x"} }, ""},
		{"issuer not a URL", func(c *Config) { c.Issuer = "idp.example" }, `oidc issuer: "idp.example" is not an absolute http(s) URL`},
		{"issuer of another scheme", func(c *Config) { c.Issuer = "ftp://idp.example" }, `oidc issuer: "ftp://idp.example" is not an absolute http(s) URL`},
		{"no client id", func(c *Config) { c.ClientID = "" }, "oidc client_id: required when issuer is set"},
		{"no redirect URL", func(c *Config) { c.RedirectURL = "" }, `oidc redirect_url: "" is not an absolute http(s) URL`},
		{"relative redirect URL", func(c *Config) { c.RedirectURL = "/api/auth/oidc/callback" }, `oidc redirect_url: "/api/auth/oidc/callback" is not an absolute http(s) URL`},
		{"unknown mapped role", func(c *Config) { c.GroupRoles["ops"] = "root" }, `oidc group_roles["ops"]: unknown role "root"`},
		{"unknown default role", func(c *Config) { c.DefaultRole = "guest" }, `oidc default_role: unknown role "guest"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			c.GroupRoles = map[string]string{"ops": "netops"}
			tt.mutate(&c)
			got := ""
			if err := c.Validate(); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Validate (-got, +want):\n%s", diff)
			}
		})
	}
}

func TestScopes(t *testing.T) {
	tests := []struct {
		name            string
		scopes          []string
		groupsSupported bool
		want            []string
	}{
		{"default", nil, false, []string{"openid", "profile", "email"}},
		{"default, provider has groups", nil, true, []string{"openid", "profile", "email", "groups"}},
		{"configured, openid added", []string{"email", "roles"}, true, []string{"openid", "email", "roles"}},
		{"configured with openid", []string{"profile", "openid"}, false, []string{"profile", "openid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Config{Scopes: tt.scopes}.scopes(tt.groupsSupported)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("scopes (-got, +want):\n%s", diff)
			}
		})
	}
}

func TestStringOrSet(t *testing.T) {
	tests := []struct {
		name string
		json string
		want stringOrSet
	}{
		{"array", `["a","b"]`, stringOrSet{"a", "b"}},
		{"one string", `"a"`, stringOrSet{"a"}},
		{"empty string", `""`, nil},
		{"number", `42`, nil},
		{"object", `{"a":1}`, nil},
		{"mixed array", `["a",1]`, nil},
		{"null", `null`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got struct {
				G stringOrSet `json:"g"`
			}
			if err := json.Unmarshal([]byte(`{"g":`+tt.json+`}`), &got); err != nil {
				t.Fatalf("unmarshal: %v", err)
			}
			if diff := cmp.Diff(got.G, tt.want); diff != "" {
				t.Errorf("decoded (-got, +want):\n%s", diff)
			}
		})
	}
}
