package reports

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"netmon/app/compliance"
	"netmon/store/storetest"
)

// TestReportHashInVerifiedBundle: with the compliance log on, a
// generated report's SHA-256 ends up in an evidence bundle that
// compliance.Verify (what `netmon compliance verify` runs) accepts, in a
// record of kind "report" next to its data hash and file name.
func TestReportHashInVerifiedBundle(t *testing.T) {
	db := storetest.OpenSQLite(t)
	clk := newClock(time.Date(2026, 11, 23, 22, 10, 0, 0, time.UTC))
	ccfg := compliance.DefaultConfig()
	ccfg.Enabled, ccfg.KeyFile, ccfg.Tick = true, filepath.Join(t.TempDir(), "compliance.key"), time.Hour
	comp := compliance.New(storetest.Logger(t), ccfg, compliance.Deps{DB: db, Now: clk.Now})
	if err := comp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = comp.Stop() })
	s, _ := newService(t, db, clk, func(_ *Config, d *Deps) { d.Compliance = comp })
	out, _, err := s.Generate(t.Context(), alice, Request{Format: FormatPDF})
	if err != nil {
		t.Fatal(err)
	}
	comp.Flush(context.Background())
	clk.Set(clk.Now().Add(2 * time.Hour)) // the hour (and the day) end: checkpointed and sealed
	comp.Flush(context.Background())
	var b bytes.Buffer
	day := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	if err := comp.Evidence(context.Background(), &b, day, day.Add(48*time.Hour), true); err != nil {
		t.Fatal(err)
	}
	rep, err := compliance.Verify(bytes.NewReader(b.Bytes()), compliance.VerifyOptions{Keys: []ed25519.PublicKey{comp.PublicKey()}})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if rep.Records != 1 {
		t.Errorf("%d records verified, want 1 (the report)", rep.Records)
	}
	var f []string
	for _, line := range strings.Split(b.String(), "\n") {
		var l struct {
			Kind string   `json:"kind"`
			F    []string `json:"f"`
		}
		if json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimSpace(line), ",")), &l) == nil && l.Kind == "report" {
			f = l.F
		}
	}
	if want := []string{out.SHA256, out.DataSHA256, out.Filename}; strings.Join(f, " ") != strings.Join(want, " ") {
		t.Errorf("report record %q, want %q", f, want)
	}
}
