package store_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestQuerySyslog checks every filter of QuerySyslog on both databases,
// against rows written oldest first: an old critical line is found behind
// a thousand newer info lines (the console used to filter only the newest
// page in the browser and lost it), the cursor pages without a skip or a
// repeat, and site scope still applies under the filters.
func TestQuerySyslog(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.InsertDevice(ctx, store.Device{Name: "fw-paris", Host: "192.0.2.1", Kind: "firewall", Site: "paris", SNMPVersion: "2c"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		es := []record.SyslogEvent{
			{TS: 1000, Host: "fw1", Source: netip.MustParseAddr("192.0.2.1"), Severity: 2, Tag: "kernel", Message: "CRIT old link down eth0"},
			{TS: 1001, Host: "FW1", Source: netip.MustParseAddr("192.0.2.1"), Severity: 3, Tag: "sshd", Message: "error: 100% of 50_tries"},
			{TS: 1002, Host: "sw2", Source: netip.MustParseAddr("192.0.2.2"), Severity: 0, Tag: "Kernel", Message: "emerg panic"},
		}
		for i := range 1000 {
			es = append(es, record.SyslogEvent{TS: 2000 + int64(i), Host: "sw2", Source: netip.MustParseAddr("192.0.2.2"), Severity: 6, Tag: "cron", Message: "info job ran"})
		}
		es = append(es, record.SyslogEvent{TS: 5000, Host: "fw1", Source: netip.MustParseAddr("192.0.2.1"), Severity: 4, Tag: "kernel", Message: "warning fan"})
		if n, err := db.WriteSyslog(ctx, es); err != nil || n != len(es) {
			t.Fatalf("WriteSyslog = %d, %v", n, err)
		}
		all := func(q store.SyslogQuery) []string {
			t.Helper()
			if q.Limit == 0 {
				q.Limit = 100
			}
			rows, err := db.QuerySyslog(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			out := []string{}
			for _, r := range rows {
				out = append(out, r.Message)
			}
			return out
		}
		tests := []struct {
			desc string
			q    store.SyslogQuery
			want []string
		}{
			{"max severity 3 reaches behind 1000 newer info lines", store.SyslogQuery{MaxSeverity: 3},
				[]string{"emerg panic", "error: 100% of 50_tries", "CRIT old link down eth0"}},
			{"max severity 7 is no filter", store.SyslogQuery{MaxSeverity: 7, Limit: 2}, []string{"warning fan", "info job ran"}},
			{"exact severities 2 and 4", store.SyslogQuery{MaxSeverity: -1, Severities: []int{2, 4}},
				[]string{"warning fan", "CRIT old link down eth0"}},
			{"host ignores case", store.SyslogQuery{MaxSeverity: -1, Host: "fw1"},
				[]string{"warning fan", "error: 100% of 50_tries", "CRIT old link down eth0"}},
			{"tag ignores case, whole field", store.SyslogQuery{MaxSeverity: -1, Tag: "kernel"},
				[]string{"warning fan", "emerg panic", "CRIT old link down eth0"}},
			{"tag is not a substring", store.SyslogQuery{MaxSeverity: -1, Tag: "kern"}, []string{}},
			{"text substring ignores case", store.SyslogQuery{MaxSeverity: -1, Text: "LINK DOWN"}, []string{"CRIT old link down eth0"}},
			{"text % and _ match literally", store.SyslogQuery{MaxSeverity: -1, Text: "100% of 50_"}, []string{"error: 100% of 50_tries"}},
			{"text % alone matches only a %", store.SyslogQuery{MaxSeverity: -1, Text: "%"}, []string{"error: 100% of 50_tries"}},
			{"time range inclusive", store.SyslogQuery{MaxSeverity: -1, From: 1001, To: 1002}, []string{"emerg panic", "error: 100% of 50_tries"}},
			{"from only", store.SyslogQuery{MaxSeverity: -1, From: 4000}, []string{"warning fan"}},
			{"all together", store.SyslogQuery{MaxSeverity: 4, Host: "fw1", Tag: "KERNEL", Text: "o", To: 4999}, []string{"CRIT old link down eth0"}},
			{"site scope under a filter", store.SyslogQuery{MaxSeverity: 3, Site: "paris"},
				[]string{"error: 100% of 50_tries", "CRIT old link down eth0"}},
			{"another site sees nothing", store.SyslogQuery{MaxSeverity: -1, Site: "berlin"}, []string{}},
		}
		for _, tt := range tests {
			if diff := cmp.Diff(all(tt.q), tt.want); diff != "" {
				t.Errorf("%s (-got, +want):\n%s", tt.desc, diff)
			}
		}

		// Cursor: pages of 2 of the severity <= 3 rows, each from the last
		// id of the previous, cover the three rows once each, in order.
		var got []string
		before := int64(0)
		for range 5 {
			rows, err := db.QuerySyslog(ctx, store.SyslogQuery{MaxSeverity: 3, Limit: 2, Before: before})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 {
				break
			}
			for _, r := range rows {
				got = append(got, r.Message)
			}
			before = rows[len(rows)-1].ID
		}
		if diff := cmp.Diff(got, []string{"emerg panic", "error: 100% of 50_tries", "CRIT old link down eth0"}); diff != "" {
			t.Errorf("cursor pages (-got, +want):\n%s", diff)
		}
	})
}
