package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// BenchmarkWriteTelemetry writes 500 batches of 500 agents (50
// connections each, as the fleet benchmark sends) per transaction: the
// ingest queue's telemetry write.
func BenchmarkWriteTelemetry(b *testing.B) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		b.Run(dialect, func(b *testing.B) {
			var db *store.DB
			if dialect == "sqlite" {
				db = storetest.OpenSQLite(b)
			} else {
				db = storetest.OpenPostgres(b)
			}
			ctx := context.Background()
			const agents = 500
			ids := make([]int64, agents)
			for i := range ids {
				_ = db.InTx(ctx, func(tx *store.Tx) error {
					var err error
					ids[i], _, err = tx.CreateAgent(ctx, store.Agent{Name: fmt.Sprint(i), MachineID: fmt.Sprint("m", i), TokenHash: fmt.Sprint("h", i), EnrolledAt: 1})
					return err
				})
			}
			conns := make([]map[string]any, 50)
			for i := range conns {
				conns[i] = map[string]any{"proto": "tcp", "local_addr": fmt.Sprintf("10.1.2.3:%d", 40000+i), "remote_addr": fmt.Sprintf("198.51.100.%d:443", i), "status": "ESTABLISHED", "pid": 1000 + i, "process": "firefox-esr"}
			}
			cj, _ := json.Marshal(conns)
			seq := uint64(0)
			b.ResetTimer()
			for b.Loop() {
				seq++
				batch := make([]record.Telemetry, agents)
				for i, id := range ids {
					batch[i] = record.Telemetry{AgentID: id, Seq: seq, TS: int64(1000 + seq), HasRates: true, In: 1, Out: 2, PPS: 3,
						Rates: []byte(`[{"name":"eth0","rx_bps":1}]`), Counters: []byte(`[{"name":"eth0","rx_bytes":1}]`), Connections: cj, Conns: 50}
				}
				if _, err := db.WriteTelemetry(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/agents, "µs/batch")
		})
	}
}
