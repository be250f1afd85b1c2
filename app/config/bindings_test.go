package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestHubFlagsBindOneFieldEach holds "a setting is declared once": every
// hub flag sets exactly one component field, no field is set by two
// settings, and the flag's default is the component's DefaultConfig value.
// A flag without a row here, or a row whose flag is gone, fails.
func TestHubFlagsBindOneFieldEach(t *testing.T) {
	want := []struct{ flag, field, def string }{
		{"config", "Server.File", ""},
		{"port", "Server.Port", "8080"},
		{"listen", "Server.Listen", ""},
		{"data-dir", "Server.DataDir", "."},
		{"public-url", "Server.PublicURL", ""},
		{"trusted-proxies", "Server.TrustedProxies", "[]"},
		{"log-format", "Server.LogFormat", "text"},
		{"log-level", "Server.LogLevel", "info"},
		{"dev", "UI.Dev", "false"},
		{"db", "Store.DSN", "netmon.db"},
		{"retention-hours", "Retention.Hours", "168"},
		{"access-log", "API.AccessLog", "false"},
		{"prune", "Retention.Enabled", "true"},
		{"alerts", "Alerts.Enabled", "true"},
		{"compliance", "Compliance.Enabled", "false"},
		{"tsa-url", "Compliance.TSAURL", ""},
		{"compliance-key", "Compliance.KeyFile", "compliance.key"},
		{"worm-dir", "Compliance.WORMDir", ""},
		{"mask-pii", "Compliance.MaskPII", "false"},
		{"compliance-retention-days", "Compliance.RetentionDays", "730"},
		{"report-timezone", "Reports.Timezone", "UTC"},
		{"ai", "AI.Enabled", "false"},
		{"nats", "NATS.URL", ""},
		{"nats-user", "NATS.User", ""},
		{"nats-password", "NATS.Password", ""},
		{"nats-creds", "NATS.CredsFile", ""},
		{"nats-ca", "NATS.CAFile", ""},
		{"ai-allow-cloud", "AI.AllowCloud", "true"},
		{"llm-base-url", "AI.LLMBaseURL", ""},
		{"llm-api-key", "AI.LLMAPIKey", ""},
		{"llm-model", "AI.LLMModel", ""},
		{"report-retention-days", "Reports.RetentionDays", "90"},
		{"max-conns", "HTTP.MaxConns", "0"},
		{"max-conns-per-source", "HTTP.MaxConnsPerSource", "0"},
		{"auth-password", "Auth.Password", ""},
		{"session-store", "Auth.SessionStore", "memory"},
		{"multi-site", "Auth.MultiSite", "false"},
		{"metrics-token", "API.MetricsToken", ""},
		{"vault-key-file", "Vault.File", "vault.key"},
		{"vault-key-source", "Vault.Source", "file"},
		{"capture", "Capture.Enabled", "true"},
		{"host-conns", "Capture.HostConns", "true"},
		{"record-dir", "Record.Dir", "captures"},
		{"record-max-mb", "Record.MaxBytes", "100"},
		{"geoip-dir", "Geo.Dir", "geoip"},
		{"ip-online-lookup", "Geo.Online", "true"},
		{"outbound-allow", "Outbound.Allow", "[]"},
		{"ioc-file", "Threat.IOCFile", ""},
		{"domain-category-file", "Threat.CategoryFile", ""},
		{"flow-port", "Flows.Addr", "0"},
		{"sflow-port", "Flows.SFlowAddr", "0"},
		{"syslog-port", "Syslog.Addr", "0"},
		{"queue-workers", "Queue.Workers", "4"},
		{"flow-minute-rows", "Queue.Flows.MinuteRows", "1000"},
		{"flow-hour-rows", "Queue.HourRows", "2000"},
		{"poller", "Devices.Enabled", "true"},
		{"devpoll-concurrency", "Devices.Concurrency", "96"},
		{"enroll-token", "Fleet.StaticToken", ""},
		{"agent-archive-days", "Fleet.ArchiveDays", "30"},
		{"agent-pcap", "Fleet.PcapEnabled", "true"},
		{"agent-interval", "Fleet.Interval", "30"},
		{"tls", "TLS.Enabled", "false"},
		{"tls-dir", "TLS.Dir", "tls"},
		{"tls-hosts", "TLS.Hosts", "[]"},
		{"tls-cert", "TLS.CertFile", ""},
		{"tls-key", "TLS.KeyFile", ""},
	}
	fs := pflag.NewFlagSet("hub", pflag.ContinueOnError)
	AddHubFlags(fs)
	byFlag := map[string]binding[HubConfig]{}
	for _, b := range hubBindings {
		if b.flag != "" {
			byFlag[b.flag] = b
		}
	}
	seen := map[string]bool{}
	for _, w := range want {
		if seen[w.flag] {
			t.Errorf("-%s: two rows in this table", w.flag)
		}
		seen[w.flag] = true
		f := fs.Lookup(w.flag)
		if f == nil {
			t.Errorf("-%s: no such hub flag", w.flag)
			continue
		}
		b, ok := byFlag[w.flag]
		if !ok {
			t.Errorf("-%s: bound to no field", w.flag)
			continue
		}
		if b.field != w.field {
			t.Errorf("-%s sets %s, want %s", w.flag, b.field, w.field)
		}
		if f.DefValue != w.def {
			t.Errorf("-%s: flag default %q, want %q", w.flag, f.DefValue, w.def)
		}
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if !seen[f.Name] {
			t.Errorf("-%s: a hub flag missing from this table", f.Name)
		}
	})
	checkBindings(t, hubBindings, DefaultHubConfig())
}

// TestAgentAndAdminBindingsOneFieldEach: the same for the agent's and
// the admin commands' settings.
func TestAgentAndAdminBindingsOneFieldEach(t *testing.T) {
	checkBindings(t, agentBindings, DefaultAgentConfig())
	checkBindings(t, adminBindings, DefaultAdminConfig())
}

// checkBindings checks that each binding's field path names the field its
// pointer sets, that no two bindings set one field, and that each flag's
// default is the field's default as shown.
func checkBindings[C any](t *testing.T, bs []binding[C], def C) {
	t.Helper()
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	declare(fs, bs, def)
	byAddr := map[uintptr]string{}
	keys := map[string]bool{}
	for _, b := range bs {
		if keys[b.key] {
			t.Errorf("key %s: bound twice", b.key)
		}
		keys[b.key] = true
		v := reflect.ValueOf(&def).Elem()
		for _, name := range strings.Split(b.field, ".") {
			v = v.FieldByName(name)
			if !v.IsValid() {
				t.Fatalf("key %s: no field %s", b.key, b.field)
			}
		}
		addr := reflect.ValueOf(b.ptr(&def)).Pointer()
		if v.Addr().Pointer() != addr {
			t.Errorf("key %s: names %s but sets another field", b.key, b.field)
		}
		if other, ok := byAddr[addr]; ok {
			t.Errorf("keys %s and %s set the same field %s", other, b.key, b.field)
		}
		byAddr[addr] = b.key
		if b.flag == "" {
			continue
		}
		f := fs.Lookup(b.flag)
		shown := b.kind.show(b.ptr(&def))
		if got := strings.Trim(f.DefValue, "[]"); got != shown {
			t.Errorf("-%s: flag default %q, field default %q", b.flag, f.DefValue, shown)
		}
	}
}
