package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// loadAgent parses args into a fresh agent flag set and loads; enrolled
// answers the state-file question.
func loadAgent(t *testing.T, enrolled bool, args ...string) (AgentConfig, error) {
	t.Helper()
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	AddAgentFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return LoadAgent(fs, func(string) (bool, error) { return enrolled, nil })
}

func TestLoadAgentPrecedence(t *testing.T) {
	host, _ := os.Hostname()
	file := writeFile(t, `
hub:
  url: https://from-file:8080
  token: ent_file
name: file-name
collect:
  method: pcap
  pcap_interface: eth1
log_level: debug
`)
	base := func(a *AgentConfig) {
		a.Agent.HubURL, a.Agent.EnrollToken, a.Agent.Name, a.Agent.Collect.Method, a.Agent.Collect.PcapInterface, a.LogLevel, a.File =
			"https://from-file:8080", "ent_file", "file-name", "pcap", "eth1", "debug", file
	}
	tests := []struct {
		desc string
		env  map[string]string
		args []string
		want func(a *AgentConfig)
	}{
		{
			desc: "flags only, defaults elsewhere",
			args: []string{"--hub-url", "http://hub:8080", "--hub-token", "ent_x"},
			want: func(a *AgentConfig) {
				a.Agent.HubURL, a.Agent.EnrollToken, a.Agent.Name = "http://hub:8080", "ent_x", host
			},
		},
		{
			desc: "file",
			args: []string{"--config", file},
			want: base,
		},
		{
			desc: "nested keys from the environment over the file",
			env:  map[string]string{"NETMON_HUB__URL": "https://from-env", "NETMON_HUB__TOKEN": " ent_env\n", "NETMON_COLLECT__METHOD": "off", "NETMON_SITE": "paris"},
			args: []string{"--config", file},
			want: func(a *AgentConfig) {
				base(a)
				a.Agent.HubURL, a.Agent.EnrollToken, a.Agent.Collect.Method, a.Agent.Site = "https://from-env", "ent_env", "off", "paris"
			},
		},
		{
			desc: "flags over environment and file",
			env:  map[string]string{"NETMON_HUB__URL": "https://from-env"},
			args: []string{"--config", file, "--hub-url", "https://from-flag", "--collect-method", "ebpf", "--pcap-interface", "en0", "--state", "/var/lib/x.json"},
			want: func(a *AgentConfig) {
				base(a)
				a.Agent.HubURL, a.Agent.Collect.Method, a.Agent.Collect.PcapInterface, a.Agent.StatePath = "https://from-flag", "ebpf", "en0", "/var/lib/x.json"
			},
		},
		{
			desc: "-enroll-token is an alias of -hub-token",
			args: []string{"--hub-url", "http://hub", "--enroll-token", "ent_alias", "--name", "n"},
			want: func(a *AgentConfig) {
				a.Agent.HubURL, a.Agent.EnrollToken, a.Agent.Name = "http://hub", "ent_alias", "n"
			},
		},
		{
			desc: "config file named by the environment",
			env:  map[string]string{"NETMON_CONFIG": file},
			want: base,
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := loadAgent(t, false, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultAgentConfig()
			tt.want(&want)
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}

func TestLoadAgentToken(t *testing.T) {
	tests := []struct {
		desc     string
		args     []string
		env      map[string]string
		enrolled bool
		wantErr  string
	}{
		{"empty token, not enrolled", []string{"--hub-url", "http://h"}, nil, false, "hub.token (flag -hub-token, env NETMON_HUB__TOKEN) is empty"},
		{"whitespace token flag, not enrolled", []string{"--hub-url", "http://h", "--hub-token", "  \t "}, nil, false, "an enroll token is needed"},
		{"whitespace token env, not enrolled", []string{"--hub-url", "http://h"}, map[string]string{"NETMON_HUB__TOKEN": "   "}, false, "is empty"},
		{"empty token, enrolled state", []string{"--hub-url", "http://h"}, nil, true, ""},
		{"token given", []string{"--hub-url", "http://h", "--hub-token", "ent_1"}, nil, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			_, err := loadAgent(t, tt.enrolled, tt.args...)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestLoadAgentStateCheckError(t *testing.T) {
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	AddAgentFlags(fs)
	_ = fs.Parse([]string{"--hub-url", "http://h", "--state", "/x/s.json"})
	boom := errors.New("state file is corrupt")
	var asked string
	_, err := LoadAgent(fs, func(p string) (bool, error) { asked = p; return false, boom })
	if !errors.Is(err, boom) || asked != "/x/s.json" {
		t.Fatalf("error %v, state asked %q", err, asked)
	}
}

func TestLoadAgentRefuses(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		desc    string
		file    string // YAML, when set
		args    []string
		wantErr string
	}{
		{"no hub url", "", []string{"--hub-token", "t"}, "hub.url"},
		{"hub url without scheme", "", []string{"--hub-url", "hub:8080", "--hub-token", "t"}, "absolute http(s) URL"},
		{"ftp hub url", "", []string{"--hub-url", "ftp://hub", "--hub-token", "t"}, "absolute http(s) URL"},
		{"unknown collect method", "", []string{"--hub-url", "http://h", "--hub-token", "t", "--collect-method", "npcap"}, "collect.method"},
		{"missing hub CA file", "", []string{"--hub-url", "https://h", "--hub-token", "t", "--hub-ca", filepath.Join(dir, "nope.pem")}, "hub.ca"},
		{"bad log level", "", []string{"--hub-url", "http://h", "--hub-token", "t", "--log-level", "loud"}, "log level"},
		{"unknown top-level key", "hub:\n  url: http://h\n  token: t\nport: 1\n", nil, `unknown key "port"`},
		{"unknown key in hub", "hub:\n  url: http://h\n  tokn: t\n", nil, `unknown key "tokn" in hub`},
		{"hub not a mapping", "hub: http://h\n", nil, "hub must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			args := tt.args
			if tt.file != "" {
				args = append(args, "--config", writeFile(t, tt.file))
			}
			_, err := loadAgent(t, false, args...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestLoadAgentDeprecatedPcap(t *testing.T) {
	tests := []struct {
		desc string
		file string
		env  map[string]string
		args []string
		want []string
	}{
		{"not given", "", nil, nil, nil},
		{"flag", "", nil, []string{"--pcap"}, []string{"collect.pcap (-pcap)"}},
		{"flag =false", "", nil, []string{"--pcap=false"}, []string{"collect.pcap (-pcap)"}},
		{"YAML", "collect:\n  pcap: true\n", nil, nil, []string{"collect.pcap (-pcap)"}},
		{"environment", "", map[string]string{"NETMON_COLLECT__PCAP": "true"}, nil, []string{"collect.pcap (-pcap)"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			args := append([]string{"--hub-url", "http://h", "--hub-token", "t"}, tt.args...)
			if tt.file != "" {
				args = append(args, "--config", writeFile(t, tt.file))
			}
			got, err := loadAgent(t, false, args...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got.Deprecated, tt.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
			if got.Agent.Collect.Method != "auto" {
				t.Errorf("collect method %q: -pcap must not change it", got.Agent.Collect.Method)
			}
		})
	}
}
