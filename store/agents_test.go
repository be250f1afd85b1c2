package store_test

import (
	"context"
	"fmt"
	"testing"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

func createAgent(t *testing.T, db *store.DB, name, machine string) int64 {
	t.Helper()
	var id int64
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		id, _, err = tx.CreateAgent(context.Background(), store.Agent{Name: name, MachineID: machine, TokenHash: "h-" + name, EnrolledAt: 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestWriteTelemetryOrder: parallel queue writers may commit an agent's
// batches out of order; the agent row keeps the newest state, every seq
// is stored once, and a deleted agent's late batches vanish.
func TestWriteTelemetryOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a := createAgent(t, db, "a", "m-a")
		gone := createAgent(t, db, "gone", "m-gone")
		tel := func(agent int64, seq uint64, conns int) record.Telemetry {
			return record.Telemetry{AgentID: agent, Seq: seq, TS: 1000 + int64(seq), HasRates: true, In: float64(seq),
				Rates: []byte(`[]`), Counters: []byte(`[]`), Connections: []byte(fmt.Sprintf(`[{"n":%d}]`, conns)), Conns: conns, Dropped: 1}
		}
		for _, batch := range [][]record.Telemetry{
			{tel(a, 3, 3), tel(a, 4, 4)},
			{tel(a, 1, 1), tel(a, 2, 2), tel(a, 4, 4)}, // older, plus a repeat of 4
			{tel(gone, 1, 1)},
		} {
			if _, err := db.WriteTelemetry(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
		got, err := db.Agent(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if got.LastSeq != 4 || got.Conns != 4 || got.Connections != `[{"n":4}]` || got.LastSeen != 1004 {
			t.Errorf("agent state %+v, want seq 4's", got)
		}
		seqs, _ := storetest.AgentSeqs(ctx, db, a)
		if fmt.Sprint(seqs) != "[1 2 3 4]" {
			t.Errorf("seqs %v", seqs)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.DeleteAgent(ctx, gone); return err }); err != nil {
			t.Fatal(err)
		}
		if _, err := db.WriteTelemetry(ctx, []record.Telemetry{tel(gone, 2, 1)}); err != nil {
			t.Fatalf("a deleted agent's batch: %v", err)
		}
		if s, _ := storetest.AgentSeqs(ctx, db, gone); len(s) != 0 {
			t.Errorf("deleted agent has samples %v", s)
		}
		h, err := db.AgentHistory(ctx, a, 0)
		if err != nil || len(h) != 4 || h[0].In != 1 || h[3].In != 4 {
			t.Errorf("history %+v %v", h, err)
		}
		// Re-enrolling the same machine replaces the agent.
		var replaced int64
		err = db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			_, replaced, err = tx.CreateAgent(ctx, store.Agent{Name: "a2", MachineID: "m-a", TokenHash: "h-a2", EnrolledAt: 2})
			return err
		})
		if err != nil || replaced != a {
			t.Fatalf("replace: %d %v", replaced, err)
		}
		if s, _ := storetest.AgentSeqs(ctx, db, a); len(s) != 0 {
			t.Errorf("replaced agent kept samples %v", s)
		}
	})
}

// TestEnrollTokenUses: the last use of a token cannot be taken twice.
func TestEnrollTokenUses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var id int64
		_ = db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			id, err = tx.CreateEnrollToken(ctx, store.EnrollToken{Name: "two", TokenHash: "x", CreatedAt: 1, MaxUses: 2})
			return err
		})
		var results []bool
		for range 3 {
			_ = db.InTx(ctx, func(tx *store.Tx) error {
				ok, err := tx.UseEnrollToken(ctx, id, 5)
				results = append(results, ok)
				return err
			})
		}
		if fmt.Sprint(results) != "[true true false]" {
			t.Errorf("uses %v", results)
		}
		_ = db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.RevokeEnrollToken(ctx, id, 9); return err })
		ks, _ := db.ListEnrollTokens(ctx, "")
		if len(ks) != 1 || ks[0].Uses != 2 || ks[0].RevokedAt != 9 || ks[0].LastUsed != 5 {
			t.Errorf("token %+v", ks)
		}
	})
}

// TestWriteTelemetryChunks: a write larger than one statement's rows
// (three full chunks and a remainder) stores every sample and each
// agent's latest state.
func TestWriteTelemetryChunks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var ids []int64
		for i := range 100 {
			ids = append(ids, createAgent(t, db, fmt.Sprintf("c%d", i), fmt.Sprintf("m-c%d", i)))
		}
		var batch []record.Telemetry
		for seq := uint64(1); seq <= 2; seq++ {
			for _, id := range ids {
				batch = append(batch, record.Telemetry{AgentID: id, Seq: seq, TS: 100 + int64(seq), HasRates: seq == 2, In: float64(id),
					Rates: []byte(`[]`), Counters: []byte(`[]`), Connections: []byte(`[]`), Conns: int(seq), Version: "v2"})
			}
		}
		if _, err := db.WriteTelemetry(ctx, batch); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM agent_samples`).Scan(&n); err != nil || n != 200 {
			t.Fatalf("%d samples stored (%v), want 200", n, err)
		}
		as, err := db.ListAgents(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.LastSeq != 2 || a.Conns != 2 || a.LastSeen != 102 || a.Version != "v2" {
				t.Fatalf("agent %+v: want seq 2's state", a)
			}
		}
	})
}
