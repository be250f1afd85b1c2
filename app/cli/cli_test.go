package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/app/version"
)

func TestNormalizeArgs(t *testing.T) {
	root := NewRoot(&bytes.Buffer{}, &bytes.Buffer{})
	tests := []struct {
		desc string
		in   []string
		want []string
	}{
		{"single-dash long flag with value", []string{"hub", "-port", "8080"}, []string{"hub", "--port", "8080"}},
		{"single-dash long flag with =", []string{"hub", "-db=postgres://x"}, []string{"hub", "--db=postgres://x"}},
		{"double dash untouched", []string{"hub", "--port", "8080"}, []string{"hub", "--port", "8080"}},
		{"hyphenated name", []string{"hub", "-retention-hours", "24", "-log-format", "json"}, []string{"hub", "--retention-hours", "24", "--log-format", "json"}},
		{"boolean with =false", []string{"hub", "-prune=false"}, []string{"hub", "--prune=false"}},
		{"shorthand stays", []string{"hub", "-h"}, []string{"hub", "-h"}},
		{"-help becomes --help", []string{"hub", "-help"}, []string{"hub", "--help"}},
		{"negative number value stays", []string{"hub", "--retention-hours", "-1"}, []string{"hub", "--retention-hours", "-1"}},
		{"unknown single-dash long word is a long flag (reported as such)", []string{"hub", "-bogus"}, []string{"hub", "--bogus"}},
		{"mistyped long flag is a long flag", []string{"hub", "-retention-hour", "5"}, []string{"hub", "--retention-hour", "5"}},
		{"shorthand group stays", []string{"hub", "-hv"}, []string{"hub", "-hv"}},
		{"after -- nothing changes", []string{"hub", "--", "-port"}, []string{"hub", "--", "-port"}},
		{"subcommand flag of another command", []string{"version", "-json"}, []string{"version", "--json"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if diff := cmp.Diff(NormalizeArgs(root, tt.in), tt.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}

func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := run("version")
	if code != 0 || strings.TrimSpace(out) != version.String() {
		t.Fatalf("code %d out %q", code, out)
	}
	for _, args := range [][]string{{"version", "--json"}, {"version", "-json"}} {
		code, out, _ = run(args...)
		var v struct {
			Version         string `json:"version"`
			ProtocolVersion int    `json:"protocol_version"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.Version != version.Version || v.ProtocolVersion != 1 {
			t.Fatalf("%v: code %d out %q", args, code, out)
		}
	}
}

func TestHubHelpExplainsEveryFlag(t *testing.T) {
	code, out, _ := run("hub", "-help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, flag := range []string{"--port", "--dev", "--db", "--retention-hours", "--prune", "--config", "--log-format", "--log-level", "NETMON_DB_MAX_CONNS"} {
		if !strings.Contains(out, flag) {
			t.Errorf("hub --help does not mention %s", flag)
		}
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	tests := []struct {
		desc    string
		args    []string
		wantErr string
	}{
		{"unknown flag", []string{"hub", "--bogus"}, "unknown flag: --bogus"},
		{"bad value", []string{"hub", "-port", "abc"}, `invalid argument "abc" for "--port"`},
		{"invalid configuration", []string{"hub", "-port", "0"}, "port 0: must be between 1 and 65535"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			code, _, errOut := run(tt.args...)
			if code == 0 || !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("exit %d stderr %q, want non-zero and %q", code, errOut, tt.wantErr)
			}
			if tt.desc != "unknown command" && code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
		})
	}
}

// TestFlagMistakes: what a user sees for the common slips, and the
// version flag and shell completion a mature CLI has.
func TestFlagMistakes(t *testing.T) {
	tests := []struct {
		args     []string
		wantCode int
		wantOut  string // substring of stdout
		wantErr  string // substring of stderr
	}{
		{[]string{"hub", "-retention-hour", "5"}, 2, "", `unknown flag: --retention-hour; did you mean "--retention-hours"?`},
		{[]string{"hub", "--geoip-dri", "x"}, 2, "", `unknown flag: --geoip-dri; did you mean "--geoip-dir"?`},
		{[]string{"hub", "--zzzzzz"}, 2, "", "unknown flag: --zzzzzz\n"},
		{[]string{"--version"}, 0, version.String(), ""},
		{[]string{"completion", "bash"}, 0, "bash completion", ""},
		{[]string{"completion", "zsh"}, 0, "compdef", ""},
	}
	for _, tt := range tests {
		code, out, errOut := run(tt.args...)
		if code != tt.wantCode || !strings.Contains(out, tt.wantOut) || !strings.Contains(errOut, tt.wantErr) {
			t.Errorf("netmon %v: code %d, stdout %.80q, stderr %q; want %d, %q, %q", tt.args, code, out, errOut, tt.wantCode, tt.wantOut, tt.wantErr)
		}
	}
}
