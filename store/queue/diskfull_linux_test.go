package queue

import (
	"context"
	"log/slog"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store"
	"netmon/store/record"
)

// TestFlowsDiskFull is RELIABILITY case 12 for flows: the SQLite file on a
// small tmpfs fills while minutes are written. Minutes that cannot be
// written are dropped whole and counted (store_error), so sent = written +
// dropped; the file stays intact; once space is freed, flows are written
// again without a restart.
func TestFlowsDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("the disk-full test needs root (tmpfs mount); CI runs as root")
		}
		t.Skip("needs root to mount a tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	ctx := context.Background()
	db, err := store.Open(ctx, slog.New(slog.DiscardHandler), store.Config{DSN: filepath.Join(dir, "netmon.db"), MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := DefaultConfig()
	cfg.Workers, cfg.FlushEvery, cfg.Retries, cfg.RetryDelay = 1, 10*time.Millisecond, 1, time.Millisecond
	cfg.Flows.Grace = time.Nanosecond // a late minute closes at the next look
	q := New(slog.New(slog.DiscardHandler), cfg, db, nil)
	_ = q.Start()
	exp := netip.MustParseAddr("192.0.2.1")
	// Each batch is a new old minute of 1 000 distinct 5-tuples: a
	// minute's full budget of rows, about 100 KB.
	batch := func(m int) []record.Flow {
		fs := make([]record.Flow, 1000)
		for i := range fs {
			fs[i] = record.Flow{TS: 1_700_000_000 + int64(m)*60, Exporter: exp, Src: netip.AddrFrom4([4]byte{10, byte(m), byte(i >> 8), byte(i)}),
				Dst: exp, SrcPort: uint16(i), DstPort: 443, Proto: 6, Packets: 1, Octets: 100}
		}
		return fs
	}
	sent := 0
	storeErrors := func() float64 { return testutil.ToFloat64(q.dropped.WithLabelValues("flow", "store_error")) }
	for m := 0; m < 200 && storeErrors() == 0; m++ {
		for !q.PutFlows(batch(m)) {
			time.Sleep(time.Millisecond)
		}
		sent += 1000
		time.Sleep(20 * time.Millisecond)
	}
	if storeErrors() == 0 {
		t.Fatal("the disk never filled")
	}
	// Space freed: the next minutes are written.
	if out, err := exec.Command("mount", "-o", "remount,size=64m", dir).CombinedOutput(); err != nil {
		t.Fatalf("grow tmpfs: %v\n%s", err, out)
	}
	before := testutil.ToFloat64(q.records.WithLabelValues("flow", "written"))
	for m := 200; m < 205; m++ {
		_ = q.PutFlows(batch(m))
		sent += 1000
	}
	_ = q.Stop()
	written := testutil.ToFloat64(q.records.WithLabelValues("flow", "written"))
	dropped := testutil.ToFloat64(q.records.WithLabelValues("flow", "dropped"))
	if int(written+dropped) != sent || written-before < 5000 {
		t.Errorf("sent %d = written %v + dropped %v? written after the space came back %v, want at least 5000", sent, written, dropped, written-before)
	}
	var stored int64
	if err := db.Reader().QueryRowContext(ctx, `SELECT COALESCE(SUM(flows), 0) FROM flow_minutes`).Scan(&stored); err != nil || stored != int64(written) {
		t.Errorf("stored %d flows (%v), counted written %v", stored, err, written)
	}
	var ok string
	if err := db.Reader().QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check %q %v", ok, err)
	}
	t.Logf("sent %d, written %v, dropped %v (store_error %v)", sent, written, dropped, storeErrors())
}
