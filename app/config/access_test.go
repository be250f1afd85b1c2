package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"netmon/app/auth/oidc"
)

func TestLoadAccess(t *testing.T) {
	file := writeFile(t, `
session_store: db
public_url: https://netmon.example
trusted_proxies: [10.0.0.1, 192.168.0.0/16]
oidc:
  issuer: https://idp.example
  client_id: netmon
  client_secret: from-file
  group_roles:
    net-admins: admin
    noc: netops
`)
	t.Setenv("AUTH_PASSWORD", "bootstrap-pw")
	t.Setenv("NETMON_OIDC__CLIENT_SECRET", "from-env")
	got, err := load(t, "--config", file, "--multi-site", "--vault-key-source", "env")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultHubConfig()
	want.Server.File = file
	want.Auth.Password, want.Auth.SessionStore, want.Auth.MultiSite = "bootstrap-pw", "db", true
	want.Server.PublicURL, want.Server.TrustedProxies = "https://netmon.example", []string{"10.0.0.1", "192.168.0.0/16"}
	want.Vault.Source = "env"
	want.OIDC = oidc.Config{Issuer: "https://idp.example", ClientID: "netmon", ClientSecret: "from-env", DefaultRole: "viewer",
		GroupRoles: map[string]string{"net-admins": "admin", "noc": "netops"}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("(-got, +want):\n%s", diff)
	}
	if u := got.Shared().OIDC.RedirectURL; u != "https://netmon.example/api/auth/oidc/callback" {
		t.Errorf("redirect %q", u)
	}
}

func TestAccessFlagsAndPrefixedPassword(t *testing.T) {
	t.Setenv("AUTH_PASSWORD", "plain")
	t.Setenv("NETMON_AUTH_PASSWORD", "prefixed")
	got, err := load(t, "--trusted-proxies", "127.0.0.1,::1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Auth.Password != "prefixed" || !cmp.Equal(got.Server.TrustedProxies, []string{"127.0.0.1", "::1"}) {
		t.Errorf("got %+v %+v", got.Auth, got.Server)
	}
	got, err = load(t, "--auth-password", "flag-wins")
	if err != nil || got.Auth.Password != "flag-wins" {
		t.Errorf("flag: %v %q", err, got.Auth.Password)
	}
}

func TestAccessErrors(t *testing.T) {
	tests := []struct {
		desc    string
		args    []string
		file    string
		wantErr string
	}{
		{desc: "session store", args: []string{"--session-store", "redis"}, wantErr: `session-store "redis": want memory or db`},
		{desc: "vault source", args: []string{"--vault-key-source", "kms"}, wantErr: `vault-key-source "kms": want file or env`},
		{desc: "public url without scheme", args: []string{"--public-url", "netmon.example"}, wantErr: `public-url "netmon.example"`},
		{desc: "bad proxy", args: []string{"--trusted-proxies", "10.0.0.0/33"}, wantErr: `trusted-proxies: "10.0.0.0/33"`},
		{desc: "oidc without client", file: "oidc:\n  issuer: https://idp\n", wantErr: "oidc.client_id: required"},
		{desc: "oidc without redirect", file: "oidc:\n  issuer: https://idp\n  client_id: x\n", wantErr: "oidc.redirect_url: required"},
		{desc: "unknown oidc key", file: "oidc:\n  issuer: https://idp\n  secret: x\n", wantErr: `unknown key "secret" in oidc`},
		{desc: "group_roles not a map", file: "oidc:\n  group_roles: admin\n", wantErr: "oidc.group_roles: must be a mapping"},
		{desc: "short metrics token", args: []string{"--metrics-token", "short-token"}, wantErr: "metrics-token: must be at least 16 characters"},
		{desc: "metrics token with spaces", file: "metrics_token: \" scrape-token-0123456789\"\n", wantErr: "metrics-token: must be at least 16 characters, without surrounding spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			args := tt.args
			if tt.file != "" {
				args = append(args, "--config", writeFile(t, tt.file))
			}
			_, err := load(t, args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// TestMetricsToken: -metrics-token, NETMON_METRICS_TOKEN and the YAML key
// set the API's scrape token (issue 28 item 5), the flag winning; config
// print never shows it.
func TestMetricsToken(t *testing.T) {
	t.Setenv("NETMON_METRICS_TOKEN", "from-env-0123456789")
	got, err := load(t)
	if err != nil || got.API.MetricsToken != "from-env-0123456789" {
		t.Fatalf("env: %v %q", err, got.API.MetricsToken)
	}
	got, err = load(t, "--metrics-token", "from-flag-0123456789")
	if err != nil || got.API.MetricsToken != "from-flag-0123456789" {
		t.Fatalf("flag: %v %q", err, got.API.MetricsToken)
	}
	fs := pflag.NewFlagSet("hub", pflag.ContinueOnError)
	AddHubFlags(fs)
	if err := fs.Parse([]string{"--metrics-token", "from-flag-0123456789"}); err != nil {
		t.Fatal(err)
	}
	_, settings, err := LoadHubSettings(fs)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range settings {
		if s.Key == "metrics_token" {
			found = s.Value == Redacted && s.Source == (Source{"flag", "--metrics-token"})
		}
		if strings.Contains(s.Value, "0123456789") {
			t.Errorf("config print shows the token: %+v", s)
		}
	}
	if !found {
		t.Errorf("config print: metrics_token is not shown redacted from its flag: %+v", settings)
	}
}
