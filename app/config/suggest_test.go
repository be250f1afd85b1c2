package config

import "testing"

func TestDidYouMean(t *testing.T) {
	known := []string{"port", "retention_hours", "geoip_dir", "syslog_port", "session_store"}
	tests := []struct{ name, want string }{
		{"retention_hour", `; did you mean "retention_hours"?`},
		{"retenton_hours", `; did you mean "retention_hours"?`},
		{"prot", `; did you mean "port"?`},
		{"geoipdir", `; did you mean "geoip_dir"?`},
		{"SYSLOG_PORT", `; did you mean "syslog_port"?`},
		{"completely_else", ""},
		{"port", ""},
	}
	for _, tt := range tests {
		if got := DidYouMean(tt.name, known); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
