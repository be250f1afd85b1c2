package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// load parses args into a fresh hub flag set and loads the configuration.
func load(t *testing.T, args ...string) (HubConfig, error) {
	t.Helper()
	fs := pflag.NewFlagSet("hub", pflag.ContinueOnError)
	AddHubFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return LoadHub(fs)
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "netmon.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadHubDefaults(t *testing.T) {
	got, err := load(t)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, DefaultHubConfig()); diff != "" {
		t.Errorf("defaults (-got, +want):\n%s", diff)
	}
}

func TestLoadHubPrecedence(t *testing.T) {
	file := writeFile(t, "port: 9001\nretention_hours: 24\ndb: from-file.db\nlog_format: json\nprune: false\n")
	budgets := writeFile(t, "flow_minute_rows: 300\nflow_hour_rows: 400\n")
	tests := []struct {
		desc string
		env  map[string]string
		args []string
		want func(h *HubConfig)
	}{
		{
			desc: "file over defaults",
			args: []string{"--config", file},
			want: func(h *HubConfig) {
				h.Server.Port, h.Retention.Hours, h.Store.DSN, h.Server.LogFormat, h.Retention.Enabled, h.Server.File = 9001, 24, "from-file.db", "json", false, file
			},
		},
		{
			desc: "environment over file",
			env:  map[string]string{"NETMON_PORT": "9002", "NETMON_DB_MAX_CONNS": "8", "NETMON_PRUNE": "true"},
			args: []string{"--config", file},
			want: func(h *HubConfig) {
				h.Server.Port, h.Retention.Hours, h.Store.DSN, h.Server.LogFormat, h.Retention.Enabled, h.Server.File, h.Store.MaxConns = 9002, 24, "from-file.db", "json", true, file, 8
			},
		},
		{
			desc: "flags over environment and file",
			env:  map[string]string{"NETMON_PORT": "9002", "NETMON_RETENTION_HOURS": "48"},
			args: []string{"--config", file, "--port", "9003", "--dev"},
			want: func(h *HubConfig) {
				h.Server.Port, h.Retention.Hours, h.Store.DSN, h.Server.LogFormat, h.Retention.Enabled, h.Server.File, h.UI.Dev = 9003, 48, "from-file.db", "json", false, file, true
			},
		},
		{
			desc: "flow store budgets from file, environment and flag",
			env:  map[string]string{"NETMON_FLOW_HOUR_ROWS": "500"},
			args: []string{"--config", budgets, "--flow-minute-rows", "250"},
			want: func(h *HubConfig) {
				h.Queue.Flows.MinuteRows, h.Queue.HourRows, h.Server.File = 250, 500, budgets
			},
		},
		{
			desc: "config file named by the environment",
			env:  map[string]string{"NETMON_CONFIG": file},
			want: func(h *HubConfig) {
				h.Server.Port, h.Retention.Hours, h.Store.DSN, h.Server.LogFormat, h.Retention.Enabled, h.Server.File = 9001, 24, "from-file.db", "json", false, file
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := load(t, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultHubConfig()
			tt.want(&want)
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}

func TestLoadHubErrors(t *testing.T) {
	tests := []struct {
		desc    string
		env     map[string]string
		file    string
		args    []string
		wantErr string
	}{
		{desc: "port out of range", args: []string{"--port", "70000"}, wantErr: "port 70000: must be between 1 and 65535"},
		{desc: "port zero", args: []string{"--port", "0"}, wantErr: "port 0: must be between 1 and 65535"},
		{desc: "retention below one", args: []string{"--retention-hours", "0"}, wantErr: "retention-hours 0: must be at least 1"},
		{desc: "empty db", args: []string{"--db", " "}, wantErr: "db: must not be empty"},
		{desc: "bad log format", args: []string{"--log-format", "xml"}, wantErr: `log format "xml"`},
		{desc: "bad log level", args: []string{"--log-level", "verbose"}, wantErr: `log level "verbose"`},
		{desc: "env port not a number", env: map[string]string{"NETMON_PORT": "eighty"}, wantErr: `port (from NETMON_PORT): "eighty" is not an integer`},
		{desc: "env bool not a bool", env: map[string]string{"NETMON_PRUNE": "maybe"}, wantErr: `prune (from NETMON_PRUNE): "maybe" is not a boolean`},
		{desc: "pool size out of range", env: map[string]string{"NETMON_DB_MAX_CONNS": "0"}, wantErr: "db_max_conns 0 (NETMON_DB_MAX_CONNS): must be between 1 and 1000"},
		{desc: "flow minute rows zero", args: []string{"--flow-minute-rows", "0"}, wantErr: "flow-minute-rows 0: must be between 1 and 100000"},
		{desc: "flow hour rows too many", env: map[string]string{"NETMON_FLOW_HOUR_ROWS": "2000000"}, wantErr: "flow-hour-rows 2000000: must be between 1 and 1000000"},
		{desc: "unknown file key", file: "prot: 80\n", wantErr: `unknown key "prot"; did you mean "port"?`},
		{desc: "listen not an address", args: []string{"--listen", "my-host"}, wantErr: `listen "my-host": want an IP address`},
		{desc: "file not YAML", file: "port: [\n", wantErr: "config file"},
		{desc: "fractional number in file", file: "port: 80.5\n", wantErr: "port: 80.5 is not a whole number"},
		{desc: "missing file", args: []string{"--config", "/nonexistent/netmon.yaml"}, wantErr: "read config file"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := tt.args
			if tt.file != "" {
				args = append(args, "--config", writeFile(t, tt.file))
			}
			_, err := load(t, args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestNoBacktickInFlagHelp: pflag takes a `quoted` word in a usage text as
// the flag's value name (--geoip-dir make geoip); no usage may have one.
func TestNoBacktickInFlagHelp(t *testing.T) {
	for name, add := range map[string]func(*pflag.FlagSet){"hub": AddHubFlags} {
		fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
		add(fs)
		fs.VisitAll(func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: usage has a backtick: %q", name, f.Name, f.Usage)
			}
		})
	}
}

// TestResolvePaths: relative file paths go under -data-dir, absolute ones
// and a PostgreSQL DSN stay; a data-dir that is not a directory is an error.
func TestResolvePaths(t *testing.T) {
	dir := t.TempDir()
	c := DefaultHubConfig()
	c.Server.DataDir = dir
	c.Geo.Dir = "/opt/geoip"
	if err := c.ResolvePaths(); err != nil {
		t.Fatal(err)
	}
	for got, want := range map[string]string{
		c.Store.DSN: filepath.Join(dir, "netmon.db"), c.Vault.File: filepath.Join(dir, "vault.key"),
		c.Record.Dir: filepath.Join(dir, "captures"), c.Geo.Dir: "/opt/geoip", c.TLS.Dir: filepath.Join(dir, "tls"),
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	pg := DefaultHubConfig()
	pg.Store.DSN = "postgres://u@h/db"
	if err := pg.ResolvePaths(); err != nil || pg.Store.DSN != "postgres://u@h/db" {
		t.Errorf("DSN changed: %q %v", pg.Store.DSN, err)
	}
	bad := DefaultHubConfig()
	bad.Server.DataDir = filepath.Join(dir, "netmon.db-missing")
	if err := bad.ResolvePaths(); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("missing data-dir: %v", err)
	}
}

// TestUDPListenersFollowListen: -listen binds the UDP collectors too
// (issue 28 item 9: they bound every interface with --listen 127.0.0.1).
func TestUDPListenersFollowListen(t *testing.T) {
	for _, tc := range []struct {
		desc                 string
		args                 []string
		flow, sflow, syslogA string
	}{
		{"no -listen: every interface", []string{"--flow-port", "2055", "--syslog-port", "5514"}, ":2055", "", ":5514"},
		{"loopback", []string{"--listen", "127.0.0.1", "--flow-port", "2055", "--sflow-port", "6343", "--syslog-port", "5514"}, "127.0.0.1:2055", "127.0.0.1:6343", "127.0.0.1:5514"},
		{"IPv6", []string{"--listen", "::1", "--flow-port", "2055"}, "[::1]:2055", "", ""},
		{"off stays off", []string{"--listen", "127.0.0.1"}, "", "", ""},
	} {
		c, err := load(t, tc.args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.desc, err)
		}
		if c.Flows.Addr != tc.flow || c.Flows.SFlowAddr != tc.sflow || c.Syslog.Addr != tc.syslogA {
			t.Errorf("%s: flow %q sflow %q syslog %q, want %q %q %q", tc.desc, c.Flows.Addr, c.Flows.SFlowAddr, c.Syslog.Addr, tc.flow, tc.sflow, tc.syslogA)
		}
	}
}
