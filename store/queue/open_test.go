package queue

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store"
	"netmon/store/flowagg"
	"netmon/store/storetest"
)

// TestReadOpenFlowsExact: reads taken while flows pour in and minutes
// close and are written (slowly) see every record accepted before the
// read began and none twice: the stored minutes plus the open ones are
// never below what was accepted before, never above what was accepted
// after, and once everything is written they equal it (issue 28).
func TestReadOpenFlowsExact(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		cfg := DefaultConfig()
		cfg.Workers, cfg.FlushEvery = 2, 5*time.Millisecond
		cfg.OpenMaxAge = time.Nanosecond // every read summarises afresh
		cfg.OpenWait = time.Minute       // never reads without waiting
		// Old minutes close Grace after they opened: many close and are
		// written (20 ms each) while the reads go on.
		cfg.Flows.Grace = 30 * time.Millisecond
		q := New(slog.New(slog.DiscardHandler), cfg, slowWriter{db, 20 * time.Millisecond}, nil)
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		var accepted atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 400 {
				// A new old minute every 40 batches.
				if q.PutFlows(flows(50, 1_700_000_000+int64(i/40)*60)) {
					accepted.Add(50)
				}
				time.Sleep(time.Millisecond)
			}
		}()
		ctx := context.Background()
		total := func() (n int64) {
			err := q.ReadOpenFlows(ctx, func(open []flowagg.Minute) error {
				n = 0
				for _, m := range open {
					for _, r := range m.Rows {
						n += int64(r.Flows)
					}
				}
				// A slow read: a minute's write often begins or ends
				// between the summary and the table read.
				time.Sleep(10 * time.Millisecond)
				var stored int64
				err := db.Reader().QueryRowContext(ctx, `SELECT COALESCE(SUM(flows), 0) FROM flow_minutes`).Scan(&stored)
				n += stored
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		reads := 0
		for running := true; running; reads++ {
			select {
			case <-done:
				running = false
			default:
			}
			lo := accepted.Load()
			n := total()
			hi := accepted.Load()
			if n < lo || n > hi {
				t.Fatalf("read %d: %d flows seen, %d accepted before the read and %d after", reads, n, lo, hi)
			}
		}
		if n, want := total(), accepted.Load(); n != want {
			t.Fatalf("at the end %d flows seen, %d accepted", n, want)
		}
		written := testutil.ToFloat64(q.minutes)
		_ = q.Stop()
		if written == 0 {
			t.Fatal("no minute was written during the reads: the test did not exercise a write")
		}
		t.Logf("%d reads, %v minutes written meanwhile, %v reads again", reads, written, testutil.ToFloat64(q.rereads))
	})
}

// TestReadOpenFlowsStalledWriter: a writer held by a slow store does not
// hold the flow reads: past OpenWait the read answers, while the write
// is still under way, without the minute being written (missed in that
// answer, not counted twice).
func TestReadOpenFlowsStalledWriter(t *testing.T) {
	db := storetest.OpenSQLite(t)
	cfg := DefaultConfig()
	cfg.Workers, cfg.FlushEvery = 1, 5*time.Millisecond
	cfg.OpenWait = 100 * time.Millisecond
	cfg.Flows.Grace = time.Nanosecond
	q := New(slog.New(slog.DiscardHandler), cfg, slowWriter{db, 3 * time.Second}, nil)
	if err := q.Start(); err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	if !q.PutFlows(flows(10, 1_700_000_000)) {
		t.Fatal("refused")
	}
	for { // until the old minute's write is under way
		if _, begun, _, _ := q.live.snapshot(); begun > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var seen int
	if err := q.ReadOpenFlows(context.Background(), func(open []flowagg.Minute) error {
		seen = len(open)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, begun, ended, _ := q.live.snapshot(); begun == ended {
		t.Fatal("the read waited for the stalled write to end")
	}
	if seen != 0 {
		t.Fatalf("%d minutes handed to the read: the one being written must not be", seen)
	}
}
