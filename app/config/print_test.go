package config

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// TestHubSettingsSources: each value is reported with where it came from —
// a flag over a variable over the file over the default — and secrets
// (passwords, tokens, the OIDC client secret, a DSN's password) never
// appear.
func TestHubSettingsSources(t *testing.T) {
	file := writeFile(t, "retention_hours: 24\nqueue_workers: 8\noidc:\n  issuer: https://idp\n  client_id: netmon\n  client_secret: file-secret\n  redirect_url: https://hub/cb\n")
	t.Setenv("NETMON_DB", "postgres://netmon:db-secret@db.example/netmon")
	t.Setenv("NETMON_QUEUE_WORKERS", "6")
	t.Setenv("AUTH_PASSWORD", "env-secret")
	fs := pflag.NewFlagSet("hub", pflag.ContinueOnError)
	AddHubFlags(fs)
	if err := fs.Parse([]string{"--config", file, "--port", "9000", "--enroll-token", "flag-secret-0123456789", "--flow-port", "2055"}); err != nil {
		t.Fatal(err)
	}
	cfg, settings, err := LoadHubSettings(fs)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Flows.Addr != ":2055" || cfg.Queue.Workers != 6 || cfg.Retention.Hours != 24 {
		t.Errorf("loaded %q %d %d", cfg.Flows.Addr, cfg.Queue.Workers, cfg.Retention.Hours)
	}
	got := map[string]Setting{}
	for _, s := range settings {
		got[s.Key] = s
	}
	for _, want := range []Setting{
		{Key: "port", Field: "Server.Port", Value: "9000", Source: Source{"flag", "--port"}},
		{Key: "flow_port", Field: "Flows.Addr", Value: "2055", Source: Source{"flag", "--flow-port"}},
		{Key: "enroll_token", Field: "Fleet.StaticToken", Value: Redacted, Source: Source{"flag", "--enroll-token"}},
		{Key: "queue_workers", Field: "Queue.Workers", Value: "6", Source: Source{"env", "NETMON_QUEUE_WORKERS"}},
		{Key: "auth_password", Field: "Auth.Password", Value: Redacted, Source: Source{"env", "AUTH_PASSWORD"}},
		{Key: "db", Field: "Store.DSN", Value: "postgres://netmon:xxxxx@db.example/netmon", Source: Source{"env", "NETMON_DB"}},
		{Key: "retention_hours", Field: "Retention.Hours", Value: "24", Source: Source{"file", file}},
		{Key: "oidc.client_secret", Field: "OIDC.ClientSecret", Value: Redacted, Source: Source{"file", file}},
		{Key: "oidc.issuer", Field: "OIDC.Issuer", Value: "https://idp", Source: Source{"file", file}},
		{Key: "agent_interval", Field: "Fleet.Interval", Value: "30", Source: Source{Kind: "default"}},
		{Key: "record_max_mb", Field: "Record.MaxBytes", Value: "100", Source: Source{Kind: "default"}},
	} {
		if diff := cmp.Diff(got[want.Key], want); diff != "" {
			t.Errorf("%s (-got, +want):\n%s", want.Key, diff)
		}
	}
	if len(settings) != len(hubBindings) {
		t.Errorf("%d settings, want one per binding (%d)", len(settings), len(hubBindings))
	}
	var out bytes.Buffer
	if err := Print(&out, settings); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"flag-secret", "env-secret", "file-secret", "db-secret"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("the printed configuration shows %s:\n%s", secret, out.String())
		}
	}
	if !strings.Contains(out.String(), "env NETMON_QUEUE_WORKERS") || !strings.HasPrefix(out.String(), "KEY") {
		t.Errorf("printed:\n%s", out.String())
	}
}

// TestAgentSettingsSources: the agent's token is redacted whichever flag
// gave it, and the host name default says so.
func TestAgentSettingsSources(t *testing.T) {
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	AddAgentFlags(fs)
	if err := fs.Parse([]string{"--hub-url", "https://hub:8080", "--enroll-token", "ent_agent-secret"}); err != nil {
		t.Fatal(err)
	}
	cfg, settings, err := LoadAgentSettings(fs, func(string) (bool, error) { return false, nil })
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Setting{}
	for _, s := range settings {
		got[s.Key] = s
	}
	if s := got["hub.token"]; s.Value != Redacted || s.Source != (Source{"flag", "--enroll-token"}) || cfg.Agent.EnrollToken != "ent_agent-secret" {
		t.Errorf("hub.token: %+v", s)
	}
	if s := got["name"]; s.Value != cfg.Agent.Name || s.Source.Kind != "default" {
		t.Errorf("name: %+v", s)
	}
	if s := got["hub.url"]; s.Value != "https://hub:8080" || s.Source != (Source{"flag", "--hub-url"}) {
		t.Errorf("hub.url: %+v", s)
	}
}
