package natsq_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

// TestStoreTelemetryOnce runs the queue into a real database (SQLite and
// PostgreSQL): batches sent twice through the queue, and one published
// again under another message id (as after the duplicate window), are
// each one sample, and the agent row holds the newest batch.
func TestStoreTelemetryOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var agent int64
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			agent, _, err = tx.CreateAgent(ctx, store.Agent{Name: "a", MachineID: "m-a", TokenHash: "h-a", EnrolledAt: 1})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		s := startServer(t, t.TempDir(), -1)
		q, reg := newQueue(t, testConfig(s.ClientURL()), db)
		for range 2 {
			publishTelemetry(t, q, agent, 50)
		}
		// Seq 7 again under an id the stream has not seen.
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		data, _ := json.Marshal([]record.Telemetry{tel(agent, 7)})
		if _, err := js.Publish(ctx, "ingest.telemetry", data, jetstream.WithMsgID("after-the-window")); err != nil {
			t.Fatal(err)
		}
		if err := q.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "51 messages written", func() bool {
			return metric(t, reg, "netmon_ingest_records_total", "kind", "telemetry", "result", "written") == 51
		})
		seqs, err := storetest.AgentSeqs(ctx, db, agent)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]uint64, 50)
		for i := range want {
			want[i] = uint64(i + 1)
		}
		if fmt.Sprint(seqs) != fmt.Sprint(want) {
			t.Errorf("seqs %v, want 1..50 once each", seqs)
		}
		a, err := db.Agent(ctx, agent)
		if err != nil || a.LastSeq != 50 || a.LastSeen != 1_800_000_050 {
			t.Errorf("agent %+v %v, want seq 50's state", a, err)
		}
		if err := q.Stop(); err != nil {
			t.Fatal(err)
		}
	})
}
