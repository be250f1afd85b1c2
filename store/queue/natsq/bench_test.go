package natsq_test

import (
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"netmon/store/queue/natsq"
	"netmon/store/record"
)

func newBenchQueue(url string, w natsq.Writer) (*natsq.Queue, error) {
	return natsq.New(slog.New(slog.DiscardHandler), natsq.Config{URL: url}, w, nil)
}

// BenchmarkTelemetryPublishToWrite: 16 producers (8 × GOMAXPROCS 2)
// publishing telemetry batches, each waiting for its acknowledgement
// (SyncAlways on), as concurrent intake requests do, while the workers write them to a fake writer;
// an op is one batch published and written.
func BenchmarkTelemetryPublishToWrite(b *testing.B) {
	s := newServer(b.TempDir(), -1)
	go s.Start()
	s.ReadyForConnections(10 * time.Second)
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	w := newFakeWriter()
	q, err := newBenchQueue(s.ClientURL(), w)
	if err != nil {
		b.Fatal(err)
	}
	defer q.Stop()
	if err := q.Start(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	// 16 producers, as concurrent agent requests are.
	var seq atomic.Uint64
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if !q.PutTelemetry([]record.Telemetry{tel(1, seq.Add(1))}) {
				b.Error("not acknowledged")
				return
			}
		}
	})
	for len(w.telemetryCounts()) < b.N {
		time.Sleep(time.Millisecond)
	}
}
