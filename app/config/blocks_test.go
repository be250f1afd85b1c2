package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// notYetReachable are Config fields no setting reaches yet (none: a new
// one is a runtime dependency to move to its component's Deps, or a
// field its block does not name).
var notYetReachable []string

// TestEveryConfigFieldReachable walks HubConfig: every field of every
// component Config is set by a flat key or a key of its component's
// block, and `netmon config print` shows it; a field no setting can
// spell (a client, a guard, a clock) belongs in the component's Deps.
// Only the fields HubConfig.Shared derives from other settings have no
// key of their own.
func TestEveryConfigFieldReachable(t *testing.T) {
	fs := pflag.NewFlagSet("hub", pflag.ContinueOnError)
	AddHubFlags(fs)
	_, settings, err := LoadHubSettings(fs)
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, s := range settings {
		shown[s.Field] = true
	}
	var missing []string
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for i := range t.NumField() {
			f := t.Field(i)
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			switch {
			case !f.IsExported():
			case f.Type.Kind() == reflect.Struct && kindOf(f.Type) == nil:
				walk(f.Type, p)
			case !shown[p] && !slices.Contains(derivedFields, p):
				missing = append(missing, p+" ("+f.Type.String()+")")
			}
		}
	}
	walk(reflect.TypeOf(HubConfig{}), "")
	if diff := cmp.Diff(missing, notYetReachable); diff != "" {
		t.Errorf("Config fields no setting reaches (-got, +want):\n%s", diff)
	}
	def := DefaultHubConfig()
	shared := def.Shared()
	for _, p := range derivedFields {
		if p == "API.Version" {
			continue
		}
		// Flip the sources: a derived field must follow them.
		c := def
		c.Auth.MultiSite, c.Retention.Enabled, c.Alerts.Enabled = !c.Auth.MultiSite, !c.Retention.Enabled, !c.Alerts.Enabled
		c.Retention.Hours++
		c.Queue.Workers++
		if fieldAt(c.Shared(), p).Interface() == fieldAt(shared, p).Interface() {
			t.Errorf("%s is listed as derived but Shared does not set it", p)
		}
	}
}

func fieldAt(c HubConfig, path string) reflect.Value {
	v := reflect.ValueOf(c)
	for _, name := range splitPath(path) {
		v = v.FieldByName(name)
	}
	return v
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := range len(p) {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// TestBlockKeys: keys of the components' blocks reach their fields from
// the file and the environment, spelled as the table says.
func TestBlockKeys(t *testing.T) {
	file := writeFile(t, "auth:\n  throttle_window: 2m\n  session_ttl: 1h30m\nfleet:\n  enroll_throttle_max_failures: 9\n"+
		"incident:\n  min_suspicious: 4\n  window: 20m\ntopology:\n  prune_every: 5m\nhttp:\n  low_file_limit: 2048\n"+
		"capture_engine:\n  source_snaplen: 128\n  source_promisc: false\ngeo:\n  reload_interval: 0s\napi:\n  body_limit: 4096\noidc:\n  scopes: [openid, email]\n")
	t.Setenv("NETMON_QUEUE__RETRIES", "7")
	fs := pflag.NewFlagSet("hub", pflag.ContinueOnError)
	AddHubFlags(fs)
	if err := fs.Parse([]string{"--config", file}); err != nil {
		t.Fatal(err)
	}
	c, settings, err := LoadHubSettings(fs)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.Auth.Throttle.Window, c.Auth.SessionTTL, c.EnrollThrottle.MaxFailures, c.EnrollThrottle.FailuresOnly,
		c.Incident.MinSuspicious, c.Incident.Window, c.Topology.PruneEvery, c.HTTP.LowFileLimit,
		c.Capture.Source.Snaplen, c.Capture.Source.Promisc, c.API.BodyLimit, c.OIDC.Scopes, c.Queue.Retries, c.Geo.ReloadInterval}
	want := []any{2 * time.Minute, 90 * time.Minute, 9, true, 4, 20 * time.Minute, 5 * time.Minute, uint64(2048),
		128, false, int64(4096), []string{"openid", "email"}, 7, time.Duration(0)}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("loaded (-got, +want):\n%s", diff)
	}
	bySetting := map[string]Setting{}
	for _, s := range settings {
		bySetting[s.Key] = s
	}
	for _, w := range []Setting{
		{Key: "auth.throttle_window", Field: "Auth.Throttle.Window", Value: "2m0s", Source: Source{"file", file}},
		{Key: "fleet.enroll_throttle_failures_only", Field: "EnrollThrottle.FailuresOnly", Value: "true", Source: Source{Kind: "default"}},
		{Key: "queue.retries", Field: "Queue.Retries", Value: "7", Source: Source{"env", "NETMON_QUEUE__RETRIES"}},
		{Key: "http.low_file_limit", Field: "HTTP.LowFileLimit", Value: "2048", Source: Source{"file", file}},
	} {
		if diff := cmp.Diff(bySetting[w.Key], w); diff != "" {
			t.Errorf("%s (-got, +want):\n%s", w.Key, diff)
		}
	}
}

// TestBlockKeyErrors: a block key's value that does not parse, or a key
// no block has, is refused with its name.
func TestBlockKeyErrors(t *testing.T) {
	for _, tc := range []struct{ desc, yaml, want string }{
		{"duration without unit", "incident:\n  window: 10\n", `incident.window: "10" is not a duration (such as 30s, 5m or 1h)`},
		{"negative limit", "http:\n  low_file_limit: -1\n", "http.low_file_limit: -1 must not be negative"},
		{"unknown key in a block", "topology:\n  prune: 5m\n", "unknown key \"prune\" in topology"},
		{"zero period", "topology:\n  prune_every: 0s\n", "topology.prune_every 0s: must be positive"},
		{"negative count", "incident:\n  min_suspicious: -2\n", "incident.min_suspicious -2: must be positive"},
		{"zero cap", "fleet:\n  enroll_throttle_max_failures: 0\n", "fleet.enroll_throttle_max_failures 0: must be positive"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			fs := pflag.NewFlagSet("hub", pflag.ContinueOnError)
			AddHubFlags(fs)
			if err := fs.Parse([]string{"--config", writeFile(t, tc.yaml)}); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadHubSettings(fs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestSnake: the key of a Go field name.
func TestSnake(t *testing.T) {
	for in, want := range map[string]string{"SessionTTL": "session_ttl", "BufferMB": "buffer_mb", "CALife": "ca_life",
		"MaxTemplatesPerExporter": "max_templates_per_exporter", "HTTPClient": "http_client", "Snaplen": "snaplen", "TSAURL": "tsaurl", "NetFlow": "netflow"} {
		if got := snake(in); got != want {
			t.Errorf("snake(%s) = %s, want %s", in, got, want)
		}
	}
}
