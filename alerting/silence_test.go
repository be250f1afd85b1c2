package alerting

import (
	"testing"

	"netmon/store/record"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"", "anything", true},
		{"bw", "bw", true},
		{"bw", "bwx", false},
		{"*", "", true},
		{"7|*", "7|198.51.100.1:4444", true},
		{"7|*", "17|x", false},
		{"*:4444", "7|198.51.100.1:4444", true},
		{"*:4444", "7|198.51.100.1:44445", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"**", "x", true},
	}
	for _, tt := range tests {
		if got := glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func TestSilenced(t *testing.T) {
	list := []record.AlertSilence{{Kind: "proc", Site: "a", Key: "3|*", Start: 100, End: 200}}
	tests := []struct {
		desc            string
		now             int64
		kind, site, key string
		want            bool
	}{
		{"inside, matching", 150, "proc", "a", "3|nc", true},
		{"before the start", 99, "proc", "a", "3|nc", false},
		{"at the end it has expired", 200, "proc", "a", "3|nc", false},
		{"another kind", 150, "port", "a", "3|nc", false},
		{"another site", 150, "proc", "b", "3|nc", false},
		{"another key", 150, "proc", "a", "4|nc", false},
	}
	for _, tt := range tests {
		if got := silenced(list, tt.now, tt.kind, tt.site, tt.key); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.desc, got, tt.want)
		}
	}
}
