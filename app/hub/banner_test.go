package hub

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"netmon/app/config"
)

// TestStartBanner: the first run says where to go and how to get in
// (issue 28 item 13c), for each way authentication can be.
func TestStartBanner(t *testing.T) {
	for _, tc := range []struct {
		desc   string
		mutate func(*config.HubConfig)
		want   []string
	}{
		{"authentication off", nil, []string{"authentication is OFF", "netmon admin user create --username admin --role admin --db "}},
		{"bootstrap password", withPassword("bootstrap-secret-1"), []string{"with the bootstrap password (-auth-password)"}},
		{"collectors and a public URL", func(c *config.HubConfig) {
			c.Server.PublicURL = "https://netmon.example:8443/"
			c.Syslog.Addr = "127.0.0.1:0"
		}, []string{"Console   https://netmon.example:8443\n", "-hub-url https://netmon.example:8443 ", "Syslog    RFC 3164/5424 to UDP 127.0.0.1:0"}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			h := startTestHub(t, storetestSQLite(t), tc.mutate)
			b := h.Banner(context.Background())
			want := append([]string{"netmon hub ", "  Agents    netmon agent -hub-url "}, tc.want...)
			if tc.mutate == nil {
				port := h.Addr().(*net.TCPAddr).Port
				want = append(want, fmt.Sprintf("Console   http://localhost:%d\n", port), "/api/docs")
			}
			for _, w := range want {
				if !strings.Contains(b, w) {
					t.Errorf("banner lacks %q:\n%s", w, b)
				}
			}
		})
	}
}

// TestAccessLogOptIn: request lines are DEBUG unless -access-log.
func TestAccessLogOptIn(t *testing.T) {
	for _, on := range []bool{false, true} {
		h := startTestHub(t, storetestSQLite(t), func(c *config.HubConfig) { c.API.AccessLog = on })
		h.client(t).call("GET", "/api/v1/agents", nil).must(t, 200)
		want := `"level":"DEBUG","msg":"http request"`
		if on {
			want = `"level":"INFO","msg":"http request"`
		}
		if logs := h.logs.String(); !strings.Contains(logs, want) {
			t.Errorf("access log %v: no %s in\n%.2000s", on, want, logs)
		}
	}
}
