package queue

import (
	"context"
	"log/slog"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store/record"
	"netmon/store/storetest"
)

// TestScanBounded is the scan of issue 16: a million one-packet flows, each
// a new 5-tuple, through the queue into SQLite with the 5-tuples held
// bounded to 50 000. The keys held never pass the bound, the heap stays
// far below what a million keys would take, and the stored totals are
// exact (the detail shed into other rows, not the flows).
func TestScanBounded(t *testing.T) {
	db := storetest.OpenSQLite(t)
	cfg := DefaultConfig()
	cfg.Flows.MaxKeys = 50_000
	cfg.FlowRecords = 100_000 // records waiting to be summed: 8 MB at most
	cfg.FlushEvery = 50 * time.Millisecond
	q := New(slog.New(slog.DiscardHandler), cfg, db, nil)
	_ = q.Start()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap0 := ms.HeapAlloc
	exporter := netip.MustParseAddr("192.0.2.1")
	now := time.Now().Unix()
	const total, batch = 1_000_000, 1000
	var peakKeys int64
	var peakHeap uint64
	fs := make([]record.Flow, batch)
	for n := 0; n < total; n += batch {
		for i := range fs {
			k := n + i
			fs[i] = record.Flow{TS: now, Exporter: exporter, Src: netip.AddrFrom4([4]byte{10, byte(k >> 16), byte(k >> 8), byte(k)}),
				Dst: netip.AddrFrom4([4]byte{198, 51, byte(k >> 8), byte(k)}), SrcPort: uint16(k), DstPort: uint16(k >> 16), Proto: 6, Packets: 1, Octets: 60}
		}
		for !q.PutFlows(fs) {
			time.Sleep(time.Millisecond) // the test is no exporter: wait rather than lose
		}
		peakKeys = max(peakKeys, q.aggKeys.Load())
		if n%100_000 == 0 {
			runtime.GC() // what is live, not garbage not yet collected
			runtime.ReadMemStats(&ms)
			peakHeap = max(peakHeap, ms.HeapAlloc)
		}
	}
	_ = q.Stop()
	if peakKeys > cfg.Flows.MaxKeys {
		t.Errorf("held %d keys, bound %d", peakKeys, cfg.Flows.MaxKeys)
	}
	// A million keys would hold 100+ MB; the bound holds about 50 000 ×
	// 128 bytes, plus the batches waiting (8 MB) and the copies in flight.
	if grown := int64(peakHeap) - int64(heap0); grown > 32<<20 {
		t.Errorf("heap grew %d MB during the scan", grown>>20)
	}
	var packets, octets, flows, rows int64
	if err := db.Reader().QueryRowContext(context.Background(), `SELECT SUM(packets), SUM(octets), SUM(flows), COUNT(*) FROM flow_minutes`).Scan(&packets, &octets, &flows, &rows); err != nil {
		t.Fatal(err)
	}
	if packets != total || octets != 60*total || flows != total {
		t.Errorf("stored %d packets, %d octets, %d flows; want %d, %d, %d", packets, octets, flows, total, 60*total, total)
	}
	if written := testutil.ToFloat64(q.records.WithLabelValues("flow", "written")); written != total {
		t.Errorf("written %v, want %d", written, total)
	}
	t.Logf("peak keys %d, heap +%d MB, %d rows stored, %d records folded for want of keys", peakKeys, (int64(peakHeap)-int64(heap0))>>20, rows, q.aggs[0].Folded()+q.aggs[1].Folded()+q.aggs[2].Folded()+q.aggs[3].Folded())
}
