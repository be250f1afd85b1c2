package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestConfigPrint: `netmon config print` takes the command's own flags
// (single dash too) and variables, prints each value with its source, and
// never a secret; a value the command would refuse is a usage error.
func TestConfigPrint(t *testing.T) {
	t.Setenv("NETMON_AUTH_PASSWORD", "hub-secret-pw")
	tests := []struct {
		desc    string
		args    []string
		code    int
		want    []string // regexps, each matching one line
		secrets []string
		wantErr string
	}{
		{
			desc:    "hub by default, single-dash flags",
			args:    []string{"config", "print", "-port", "9100", "-enroll-token", "static-secret-0123456789"},
			want:    []string{`(?m)^port +9100 +flag --port +Server\.Port$`, `(?m)^auth_password +<redacted> +env NETMON_AUTH_PASSWORD +Auth\.Password$`, `(?m)^enroll_token +<redacted> +flag --enroll-token`, `(?m)^retention_hours +168 +default +Retention\.Hours$`},
			secrets: []string{"hub-secret-pw", "static-secret"},
		},
		{
			desc: "print hub",
			args: []string{"config", "print", "hub", "--agent-interval", "5"},
			want: []string{`(?m)^agent_interval +5 +flag --agent-interval +Fleet\.Interval$`},
		},
		{
			desc:    "print agent",
			args:    []string{"config", "print", "agent", "-hub-url", "https://hub:8080", "-hub-token", "ent_agent-secret"},
			want:    []string{`(?m)^hub\.url +https://hub:8080 +flag --hub-url +Agent\.HubURL$`, `(?m)^hub\.token +<redacted> +flag --hub-token`},
			secrets: []string{"agent-secret"},
		},
		{desc: "invalid hub value", args: []string{"config", "print", "--port", "0"}, code: 2, wantErr: "port 0: must be between 1 and 65535"},
		{desc: "agent without hub url", args: []string{"config", "print", "agent"}, code: 2, wantErr: "hub.url"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			code, out, errOut := run(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errOut)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q lacks %q", errOut, tt.wantErr)
			}
			for _, w := range tt.want {
				if !regexp.MustCompile(w).MatchString(out) {
					t.Errorf("output lacks %s:\n%s", w, out)
				}
			}
			for _, s := range tt.secrets {
				if strings.Contains(out, s) {
					t.Errorf("output shows the secret %q:\n%s", s, out)
				}
			}
		})
	}
}
