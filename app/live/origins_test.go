package live

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOrigins(t *testing.T) {
	tests := []struct {
		desc      string
		publicURL string
		tls       bool
		hosts     []string
		want      []string
	}{
		{desc: "nothing set: every origin", want: nil},
		{desc: "tls hosts without tls count for nothing", hosts: []string{"hub.lan"}, want: nil},
		{desc: "public url", publicURL: "https://netmon.example/path",
			want: []string{"https://netmon.example", "http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"}},
		{desc: "tls hosts", tls: true, hosts: []string{"hub.lan", "10.0.0.5"},
			want: []string{"https://hub.lan:8080", "https://10.0.0.5:8080", "https://localhost:8080", "https://127.0.0.1:8080", "https://[::1]:8080"}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if diff := cmp.Diff(Origins(tt.publicURL, tt.tls, tt.hosts, 8080), tt.want); diff != "" {
				t.Errorf("(-got, +want):\n%s", diff)
			}
		})
	}
}
