package cli

import (
	"strings"
	"testing"
)

func TestDocsCommand(t *testing.T) {
	for _, tt := range []struct {
		args       []string
		code       int
		out, err   string
		notContain string
	}{
		{[]string{"docs"}, 0, "Agents and deep collection\n", "", ""},
		{[]string{"docs", "agents"}, 0, "# Agents and deep collection\n", "", ""},
		{[]string{"docs", "15"}, 0, "# Troubleshooting\n", "", ""},
		{[]string{"docs", "--headings", "troubleshooting"}, 0, "The hub does not start\nNo flows appear\n", "", "#"},
		{[]string{"docs", "nosuchtopic"}, 2, "", `netmon: no page of the manual matches "nosuchtopic" (netmon docs lists them)`, ""},
	} {
		code, out, errOut := run(tt.args...)
		if code != tt.code || !strings.Contains(out, tt.out) || !strings.Contains(errOut, tt.err) {
			t.Errorf("netmon %v = %d, stdout %.200q, stderr %q; want %d, %q, %q", tt.args, code, out, errOut, tt.code, tt.out, tt.err)
		}
		if tt.notContain != "" && strings.Contains(out, tt.notContain) {
			t.Errorf("netmon %v: stdout holds %q", tt.args, tt.notContain)
		}
	}
}
