package cli

import (
	"bytes"
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"netmon/app/compliance"
	"netmon/store/record"
	"netmon/store/storetest"
)

type nopSink struct{}

func (nopSink) PutFlows([]record.Flow) bool          { return true }
func (nopSink) PutSyslog([]record.SyslogEvent) bool  { return true }
func (nopSink) PutTelemetry([]record.Telemetry) bool { return true }

// evidenceService runs a compliance log on a fake clock over five hours
// of 2026-11-23 (one flow an hour, every hour checkpointed, the day
// sealed): the bundles it writes are genuine, every record signed.
func evidenceService(t *testing.T, dir string) (s *compliance.Service, pub string, from, to time.Time) {
	t.Helper()
	var now atomic.Int64
	t0 := time.Date(2026, 11, 23, 20, 30, 0, 0, time.UTC)
	now.Store(t0.Unix())
	cfg := compliance.DefaultConfig()
	cfg.Enabled, cfg.KeyFile, cfg.Tick = true, filepath.Join(dir, "compliance.key"), time.Hour
	s = compliance.New(storetest.Logger(t), cfg, compliance.Deps{DB: storetest.OpenSQLite(t), Now: func() time.Time { return time.Unix(now.Load(), 0) }})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	sink := s.Tee(nopSink{})
	for h := range 5 {
		now.Store(t0.Add(time.Duration(h) * time.Hour).Unix())
		sink.PutFlows([]record.Flow{{TS: now.Load(), Exporter: netip.MustParseAddr("192.0.2.1"), Src: netip.MustParseAddr("10.0.0.1"),
			Dst: netip.MustParseAddr("10.0.0.2"), SrcPort: 1000, DstPort: 53, Proto: 17, Packets: 1, Octets: uint64(60 + h)}})
		s.Flush(context.Background())
	}
	now.Store(t0.Add(5 * time.Hour).Unix())
	s.Flush(context.Background())
	if st, err := os.Stat(cfg.KeyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	return s, cfg.KeyFile + ".pub", t0.Truncate(24 * time.Hour), t0.Add(24 * time.Hour).Truncate(24 * time.Hour)
}

// TestComplianceVerifyCmd runs `netmon compliance verify` on a .zip and a
// .tar.gz download, then on a tampered bundle: exit 0 and OK, then exit 1
// naming the first bad record.
func TestComplianceVerifyCmd(t *testing.T) {
	dir := t.TempDir()
	s, pub, from, to := evidenceService(t, dir)
	for _, format := range []string{compliance.ArchiveZip, compliance.ArchiveTarGz} {
		var b bytes.Buffer
		if err := s.WriteArchive(context.Background(), &b, format, from, to, true); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "evidence."+format)
		_ = os.WriteFile(file, b.Bytes(), 0o644)
		code, out, errOut := run("compliance", "verify", file, "-pub", pub)
		if code != 0 || out != "note: day 2026-11-23: no timestamp (tsa_status none)\nOK: 5 records, 5 hourly checkpoints, 1 daily seals (0 timestamped) verified with 1 key(s)\n" {
			t.Fatalf("%s: code %d\nstdout %q\nstderr %q", format, code, out, errOut)
		}
	}
	var b bytes.Buffer
	if err := s.Evidence(context.Background(), &b, from, to, false); err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(b.Bytes(), []byte(`"61"]`), []byte(`"16"]`), 1)
	file := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(file, bad, 0o644)
	code, out, _ := run("compliance", "verify", file, "--pub", pub)
	if code != 1 || !strings.HasPrefix(out, "FAILED: record seq 2: content does not match the chain") {
		t.Fatalf("tampered: code %d out %q", code, out)
	}
	if code, _, _ := run("compliance", "verify", file); code != 2 {
		t.Fatalf("no --pub: code %d, want 2", code)
	}
}
