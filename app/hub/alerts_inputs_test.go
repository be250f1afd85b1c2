package hub

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/alerting/rules"
)

// TestAppendConn: only established connections with a remote port reach
// the rules, IPv6 included.
func TestAppendConn(t *testing.T) {
	tests := []struct {
		desc, remote, status string
		want                 []rules.Conn
	}{
		{"established v4", "198.51.100.7:4444", "ESTABLISHED", []rules.Conn{{AgentID: 3, Site: "a", RemoteIP: "198.51.100.7", RemotePort: 4444, Process: "nc"}}},
		{"established v6", "[2001:db8::1]:443", "ESTABLISHED", []rules.Conn{{AgentID: 3, Site: "a", RemoteIP: "2001:db8::1", RemotePort: 443, Process: "nc"}}},
		{"listening", "*:*", "LISTEN", nil},
		{"time wait", "198.51.100.7:4444", "TIME_WAIT", nil},
		{"no remote", "", "ESTABLISHED", nil},
		{"port 0", "198.51.100.7:0", "ESTABLISHED", nil},
		{"junk port", "198.51.100.7:http", "ESTABLISHED", nil},
	}
	for _, tt := range tests {
		got := appendConn(nil, tt.remote, tt.status, "nc", 3, "a")
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("%s (-got, +want):\n%s", tt.desc, diff)
		}
	}
}
