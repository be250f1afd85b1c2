package store_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestSyslogRaw checks the raw column on both databases: a message's
// datagram comes back byte for byte (every byte value, NUL and invalid
// UTF-8 included) beside its cleaned text; a clean message stores NULL,
// reads back as nil and has no raw_b64 in JSON.
func TestSyslogRaw(t *testing.T) {
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	tests := []struct {
		desc string
		in   record.SyslogEvent
		want store.SyslogRow
	}{
		{
			desc: "clean: no raw",
			in:   record.SyslogEvent{TS: 100, Host: "h", Severity: 5, Facility: 1, Tag: "app", Message: "clean"},
			want: store.SyslogRow{TS: 100, Host: "h", Severity: 5, Facility: 1, Tag: "app", Message: "clean"},
		},
		{
			desc: "NUL and invalid UTF-8: cleaned text, raw as received",
			in: record.SyslogEvent{TS: 101, Host: "h", Severity: 5, Facility: 1, Tag: "app", Message: "a\uFFFDb \uFFFD",
				Raw: []byte("<13>Nov 24 10:00:00 h app: a\x00b \xff\n")},
			want: store.SyslogRow{TS: 101, Host: "h", Severity: 5, Facility: 1, Tag: "app", Message: "a\uFFFDb \uFFFD",
				Raw: []byte("<13>Nov 24 10:00:00 h app: a\x00b \xff\n")},
		},
		{
			desc: "every byte value",
			in:   record.SyslogEvent{TS: 102, Host: "h", Message: "m", Raw: every},
			want: store.SyslogRow{TS: 102, Host: "h", Message: "m", Raw: every},
		},
		{
			desc: "dirty text without raw is still cleaned (a producer other than the receiver)",
			in:   record.SyslogEvent{TS: 103, Host: "h\x00", Tag: "t\xff", Message: "m\x00"},
			want: store.SyslogRow{TS: 103, Host: "h\uFFFD", Tag: "t\uFFFD", Message: "m\uFFFD"},
		},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var es []record.SyslogEvent
		for _, tt := range tests {
			es = append(es, tt.in)
		}
		if n, err := db.WriteSyslog(t.Context(), es); err != nil || n != len(es) {
			t.Fatalf("WriteSyslog = %d, %v; want %d", n, err, len(es))
		}
		rows, err := db.ListSyslog(t.Context(), 10, 0, 0, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(tests) {
			t.Fatalf("%d rows, want %d", len(rows), len(tests))
		}
		for i, tt := range tests {
			got := rows[len(rows)-1-i] // newest first
			got.ID = 0
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("%s (-got, +want):\n%s", tt.desc, diff)
			}
			if tt.in.Raw == nil && got.Raw != nil {
				t.Errorf("%s: raw %q, want nil (NULL)", tt.desc, got.Raw)
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(string(b), `"raw_b64"`); has != (tt.in.Raw != nil) {
				t.Errorf("%s: JSON %s, want raw_b64 only with raw", tt.desc, b)
			}
		}
		var nulls int
		if err := db.Reader().QueryRowContext(t.Context(), `SELECT COUNT(*) FROM syslog_events WHERE raw IS NULL`).Scan(&nulls); err != nil {
			t.Fatal(err)
		}
		if nulls != 2 {
			t.Errorf("%d rows with raw NULL, want 2 (the messages without raw)", nulls)
		}
	})
}
