package hub

import (
	"context"
	"fmt"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/app/config"
	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestSyslogFilterParams: GET /api/v1/syslog filters in the hub, so an old
// critical line behind a thousand newer info lines is found (the console
// filtered the newest page in the browser and lost it); the cursor pages
// it; a site-bound user sees its site's sources only under the filters;
// bad values are a 400 naming the parameter.
func TestSyslogFilterParams(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) {
		h, boot := bootstrap(t, dsn, func(c *config.HubConfig) { c.Auth.MultiSite = true })
		ctx := context.Background()
		if err := h.db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.InsertDevice(ctx, store.Device{Name: "fw-a", Host: "192.0.2.1", Kind: "firewall", Site: "a", SNMPVersion: "2c"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
		es := []record.SyslogEvent{
			{TS: 1000, Host: "fw1", Source: a, Severity: 2, Tag: "kernel", Message: "link down eth0"},
			{TS: 1001, Host: "sw2", Source: b, Severity: 1, Tag: "kernel", Message: "fan failed"},
		}
		for i := range 1000 {
			es = append(es, record.SyslogEvent{TS: 2000 + int64(i), Host: "sw2", Source: b, Severity: 6, Tag: "cron", Message: "job ran"})
		}
		if _, err := h.db.WriteSyslog(ctx, es); err != nil {
			t.Fatal(err)
		}
		type row struct {
			ID      int64  `json:"id"`
			Message string `json:"message"`
		}
		list := func(c *client, q string) []string {
			t.Helper()
			var rs []row
			c.call("GET", "/api/v1/syslog"+q, nil).must(t, 200).decode(t, &rs)
			out := []string{}
			for _, r := range rs {
				out = append(out, r.Message)
			}
			return out
		}
		for _, tt := range []struct {
			q    string
			want []string
		}{
			{"?severity=3", []string{"fan failed", "link down eth0"}},
			{"?severities=2,6&limit=2", []string{"job ran", "job ran"}},
			{"?severities=2&severity=7", []string{"link down eth0"}},
			{"?host=FW1", []string{"link down eth0"}},
			{"?tag=kernel&text=FAN", []string{"fan failed"}},
			{"?from=1000&to=1001", []string{"fan failed", "link down eth0"}},
			{"?to=999", []string{}},
		} {
			if diff := cmp.Diff(list(boot, tt.q), tt.want); diff != "" {
				t.Errorf("%s (-got, +want):\n%s", tt.q, diff)
			}
		}
		// Cursor: one row per page.
		var first []row
		boot.call("GET", "/api/v1/syslog?severity=3&limit=1", nil).must(t, 200).decode(t, &first)
		if len(first) != 1 {
			t.Fatalf("first page %+v", first)
		}
		if diff := cmp.Diff(list(boot, fmt.Sprintf("?severity=3&limit=1&before=%d", first[0].ID)), []string{"link down eth0"}); diff != "" {
			t.Errorf("second page (-got, +want):\n%s", diff)
		}
		// Site scope holds under the filters.
		boot.createUser("view-a", "site-a-pass", "viewer", "a")
		va := h.client(t)
		va.login("view-a", "site-a-pass")
		if diff := cmp.Diff(list(va, "?severity=3"), []string{"link down eth0"}); diff != "" {
			t.Errorf("site a viewer (-got, +want):\n%s", diff)
		}
		for q, body := range map[string]string{
			"?severity=8":     `{"error":"query parameter \"severity\": must be an integer between 0 and 7"}`,
			"?severities=1,x": `{"error":"query parameter \"severities\": must be severities 0-7 separated by commas"}`,
			"?severities=9":   `{"error":"query parameter \"severities\": must be severities 0-7 separated by commas"}`,
			"?from=10&to=9":   `{"error":"query parameter \"to\": must not be before from"}`,
			"?before=-1":      `{"error":"query parameter \"before\": must be an integer of at least 0"}`,
		} {
			if r := boot.call("GET", "/api/v1/syslog"+q, nil); r.code != 400 || r.body != body {
				t.Errorf("%s: %d %s, want 400 %s", q, r.code, r.body, body)
			}
		}
	})
}
