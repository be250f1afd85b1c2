package compliance

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/store/storetest"
)

// TestReportRecordVerifies: a report's hashes appended with AppendReport
// are chained like flows and syslog lines: the masked and the unmasked
// evidence bundles both verify and both carry the report record with its
// three fields in clear (hashes and a file name are no personal data).
func TestReportRecordVerifies(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := &clock{t: day0}
	s := newTestService(t, db, clk, filepath.Join(t.TempDir(), "compliance.key"), nil)
	const (
		sum  = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
		data = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
		file = "netmon-traffic-all-20261117-20261123.pdf"
	)
	if err := s.AppendReport(context.Background(), sum, data, file); err != nil {
		t.Fatal(err)
	}
	fill(t, s, clk, 2, 3)
	for _, mask := range []bool{false, true} {
		b := evidence(t, s, mask)
		rep, err := Verify(bytes.NewReader(b), VerifyOptions{Keys: []ed25519.PublicKey{s.PublicKey()}})
		if err != nil {
			t.Fatalf("mask=%v: verify: %v", mask, err)
		}
		// 1 report + 2 hours × (3 flows + 1 syslog line).
		if rep.Records != 9 {
			t.Errorf("mask=%v: %d records verified, want 9", mask, rep.Records)
		}
		var found bool
		// The bundle holds one record per line, each followed by a comma.
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSuffix(strings.TrimSpace(line), ",")
			var l struct {
				Kind string   `json:"kind"`
				F    []string `json:"f"`
			}
			if json.Unmarshal([]byte(line), &l) != nil || l.Kind != "report" {
				continue
			}
			found = true
			if len(l.F) != 3 || l.F[0] != sum || l.F[1] != data || l.F[2] != file {
				t.Errorf("mask=%v: report record fields %q, want [%s %s %s]", mask, l.F, sum, data, file)
			}
		}
		if !found {
			t.Errorf("mask=%v: no report record in the bundle", mask)
		}
	}
}

// TestAppendReportOff: with the log off nothing is queued and no error.
func TestAppendReportOff(t *testing.T) {
	s := New(storetest.Logger(t), DefaultConfig(), Deps{DB: storetest.OpenSQLite(t), Now: func() time.Time { return day0 }})
	if err := s.AppendReport(context.Background(), "a", "b", "c"); err != nil {
		t.Fatal(err)
	}
	if len(s.queue) != 0 {
		t.Errorf("%d records queued with the log off, want 0", len(s.queue))
	}
}
