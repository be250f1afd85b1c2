package queue

import (
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"netmon/store/record"
	"netmon/store/storetest"
)

// TestQueueDeepBound: deep collection records have their own bound (in
// agent batches), are written on Stop, and are counted under kind deep.
func TestQueueDeepBound(t *testing.T) {
	db := storetest.OpenSQLite(t)
	cfg := DefaultConfig()
	cfg.DeepRecords, cfg.Workers, cfg.FlushEvery = 4, 1, time.Hour
	q := New(slog.New(slog.DiscardHandler), cfg, db, nil)
	accepted := 0
	for i := range 6 {
		if q.PutDeep([]record.Deep{{AgentID: 1, Seq: uint64(i + 1), TS: 1_700_000_000}}) {
			accepted++
		}
	}
	if accepted != 4 {
		t.Fatalf("accepted %d, want 4", accepted)
	}
	if !q.PutTelemetry([]record.Telemetry{{AgentID: 1, Seq: 1}}) {
		t.Error("telemetry refused by the deep bound")
	}
	_ = q.Start()
	_ = q.Stop()
	written := testutil.ToFloat64(q.records.WithLabelValues("deep", "written"))
	full := testutil.ToFloat64(q.dropped.WithLabelValues("deep", "queue_full"))
	if written != 4 || full != 2 || q.pending[kindDeep].Load() != 0 {
		t.Errorf("written %v, queue_full %v, pending %d; want 4, 2, 0", written, full, q.pending[kindDeep].Load())
	}
}
