//go:build unix

package compliance

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"netmon/store"
	"netmon/store/record"
)

const (
	crashEnvHelper = "NETMON_COMPLIANCE_CRASH_HELPER"
	crashEnvDir    = "NETMON_COMPLIANCE_CRASH_DIR"
	crashRounds    = 10
)

// TestComplianceCrashHelper is the child of TestComplianceKill9: it
// appends flow records as fast as the writer takes them until it is
// killed (or 10 s pass). It does nothing unless the environment says so.
func TestComplianceCrashHelper(t *testing.T) {
	if os.Getenv(crashEnvHelper) != "1" {
		return
	}
	dir := os.Getenv(crashEnvDir)
	db, err := store.Open(context.Background(), slog.New(slog.DiscardHandler), store.Config{DSN: filepath.Join(dir, "netmon.db"), MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Enabled, cfg.KeyFile, cfg.Batch = true, filepath.Join(dir, "compliance.key"), 256
	s := New(slog.New(slog.DiscardHandler), cfg, Deps{DB: db})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	sink := s.Tee(nopSink{})
	fs := make([]record.Flow, 64)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
		for i := range fs {
			fs[i] = flow(rand.IntN(1 << 16))
		}
		sink.PutFlows(fs)
		time.Sleep(time.Millisecond)
	}
}

// TestComplianceKill9 is RELIABILITY case 11 for the compliance log: the
// writer is killed with SIGKILL in the middle of its bursts ten times on
// the same database; each restart rebuilds the chain from what was
// committed, and at the end the whole log, sealed, verifies.
func TestComplianceKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("kills ten child processes")
	}
	dir := t.TempDir()
	for round := range crashRounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestComplianceCrashHelper$")
		cmd.Env = append(os.Environ(), crashEnvHelper+"=1", crashEnvDir+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(150+rand.IntN(350)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		t.Logf("round %d killed", round)
	}
	db, err := store.Open(context.Background(), slog.New(slog.DiscardHandler), store.Config{DSN: filepath.Join(dir, "netmon.db"), MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ok string
	if err := db.Reader().QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check: %q %v", ok, err)
	}
	n, err := db.ComplianceCount(context.Background())
	if err != nil || n == 0 {
		t.Fatalf("records after the kills: %d (%v)", n, err)
	}
	// A day later: the survivor seals everything; the bundle verifies.
	later := time.Now().Add(26 * time.Hour)
	cfg := DefaultConfig()
	cfg.Enabled, cfg.KeyFile, cfg.Tick = true, filepath.Join(dir, "compliance.key"), time.Hour
	s := New(slog.New(slog.DiscardHandler), cfg, Deps{DB: db, Now: func() time.Time { return later }})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	s.Flush(context.Background())
	var b bytes.Buffer
	today := time.Now().UTC().Truncate(24 * time.Hour)
	if err := s.Evidence(context.Background(), &b, today.Add(-24*time.Hour), today, false); err != nil {
		t.Fatal(err)
	}
	rep, err := Verify(bytes.NewReader(b.Bytes()), VerifyOptions{Keys: []ed25519.PublicKey{s.PublicKey()}})
	if err != nil || int64(rep.Records) != n || rep.Daily == 0 {
		t.Fatalf("verify after %d kills: %v (%+v, %d records stored)", crashRounds, err, rep, n)
	}
	t.Logf("%d records chained across %d kills verify (%d hourly checkpoints, %d seals)", n, crashRounds, rep.Hourly, rep.Daily)
}
