package record

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendEstablished(t *testing.T) {
	tests := []struct {
		desc, remote, status string
		want                 []Conn
	}{
		{desc: "established IPv4", remote: "192.0.2.1:443", status: "ESTABLISHED", want: []Conn{{AgentID: 7, Site: "a", RemoteIP: "192.0.2.1", RemotePort: 443, Process: "curl"}}},
		{desc: "established IPv6", remote: "[2001:db8::1]:22", status: "ESTABLISHED", want: []Conn{{AgentID: 7, Site: "a", RemoteIP: "2001:db8::1", RemotePort: 22, Process: "curl"}}},
		{desc: "listening", remote: "*:*", status: "LISTEN"},
		{desc: "time wait", remote: "198.51.100.7:4444", status: "TIME_WAIT"},
		{desc: "no remote", remote: "", status: "ESTABLISHED"},
		{desc: "junk port", remote: "198.51.100.7:http", status: "ESTABLISHED"},
		{desc: "port 0", remote: "192.0.2.1:0", status: "ESTABLISHED"},
		{desc: "no port", remote: "192.0.2.1", status: "ESTABLISHED"},
		{desc: "port out of range", remote: "192.0.2.1:70000", status: "ESTABLISHED"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got := AppendEstablished(nil, tt.remote, tt.status, "curl", 7, "a")
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}
