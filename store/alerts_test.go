package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"netmon/store"
	"netmon/store/record"
	"netmon/store/storetest"
)

func TestAlertEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var ids []int64
		for i, e := range []record.AlertEvent{
			{TS: 100, Kind: "bw", Key: "hub", Message: "in 120 Mbit/s", Severity: 5, State: "firing"},
			{TS: 200, Kind: "port", Key: "3|198.51.100.7:4444", Severity: 9, State: "firing", Site: "a", AgentID: 3},
			{TS: 200, Kind: "proc", Key: "3|nc", Severity: 4, State: "firing", Site: "b", AgentID: 4},
		} {
			got, err := db.InsertAlertEvent(ctx, e)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID == 0 || got.Count != 1 || got.LastTS != e.TS {
				t.Fatalf("insert %d: %+v", i, got)
			}
			ids = append(ids, got.ID)
		}
		if err := db.RepeatAlertEvent(ctx, ids[0], 3, 150); err != nil {
			t.Fatal(err)
		}
		e, err := db.AlertEvent(ctx, ids[0])
		if err != nil || e.Count != 3 || e.LastTS != 150 {
			t.Fatalf("after repeat: %+v %v", e, err)
		}
		if _, err := db.AlertEvent(ctx, 999); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing event: %v", err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.SetAlertState(ctx, ids[1], record.AlertAck, 0); err != nil {
				return err
			}
			_, err := tx.AddAlertNote(ctx, record.AlertNote{EventID: ids[1], TS: 210, Author: "ann", Text: "looking"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { return tx.SetAlertState(ctx, 999, record.AlertAck, 0) })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("ack of a missing event: %v", err)
		}
		if err := db.ResolveAlertEvent(ctx, ids[2], 300); err != nil {
			t.Fatal(err)
		}
		notes, err := db.AlertNotes(ctx, ids[1])
		if err != nil || len(notes) != 1 || notes[0].Text != "looking" || notes[0].Author != "ann" {
			t.Errorf("notes: %+v %v", notes, err)
		}

		list := func(f store.AlertFilter) []int64 {
			t.Helper()
			evs, err := db.ListAlertEvents(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			out := []int64{}
			for _, e := range evs {
				out = append(out, e.ID)
			}
			return out
		}
		tests := []struct {
			desc string
			f    store.AlertFilter
			want []int64
		}{
			{"all, newest first, id breaks ties", store.AlertFilter{}, []int64{ids[2], ids[1], ids[0]}},
			{"kind", store.AlertFilter{Kind: "bw"}, []int64{ids[0]}},
			{"state", store.AlertFilter{State: "ack"}, []int64{ids[1]}},
			{"open", store.AlertFilter{Open: true}, []int64{ids[1], ids[0]}},
			{"site", store.AlertFilter{Site: "b"}, []int64{ids[2]}},
			{"site scope", store.AlertFilter{SiteScope: "a"}, []int64{ids[1]}},
			{"severity", store.AlertFilter{MinSeverity: 5}, []int64{ids[1], ids[0]}},
			{"agent", store.AlertFilter{AgentID: 4}, []int64{ids[2]}},
			{"from/to", store.AlertFilter{From: 150, To: 200}, []int64{ids[2], ids[1]}},
			{"limit", store.AlertFilter{Limit: 1}, []int64{ids[2]}},
			{"cursor inside a tie", store.AlertFilter{BeforeTS: 200, BeforeID: ids[2]}, []int64{ids[1], ids[0]}},
		}
		for _, tt := range tests {
			if diff := cmp.Diff(list(tt.f), tt.want); diff != "" {
				t.Errorf("%s (-got, +want):\n%s", tt.desc, diff)
			}
		}
	})
}

func TestAlertSilences(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var id int64
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			id, err = tx.InsertAlertSilence(ctx, record.AlertSilence{Kind: "proc", Key: "3|*", Start: 100, End: 200, Comment: "patching", CreatedBy: "ann", CreatedAt: 90})
			if err != nil {
				return err
			}
			_, err = tx.InsertAlertSilence(ctx, record.AlertSilence{Kind: "bw", Start: 100, End: 150, CreatedAt: 90})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		got, err := db.AlertSilences(ctx, 160)
		if err != nil {
			t.Fatal(err)
		}
		want := []record.AlertSilence{{ID: id, Kind: "proc", Key: "3|*", Start: 100, End: 200, Comment: "patching", CreatedBy: "ann", CreatedAt: 90}}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("silences not ended at 160 (-got, +want):\n%s", diff)
		}
		if all, _ := db.AlertSilences(ctx, 0); len(all) != 2 {
			t.Errorf("all silences: %d", len(all))
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteAlertSilence(ctx, id) }); err != nil {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteAlertSilence(ctx, id) })
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second delete: %v", err)
		}
	})
}

// TestAgentSeqsAndInventories: the alert engine's two reads. AgentSeqs
// lists the agents seen since a time with their last seq; AgentInventories
// returns exactly the asked agents' last connections with the seq they
// came from, across more ids than one IN list takes (500).
func TestAgentSeqsAndInventories(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const n = 1203
		ids := make([]int64, n)
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := range ids {
				id, _, err := tx.CreateAgent(ctx, store.Agent{Name: fmt.Sprintf("s%d", i), MachineID: fmt.Sprintf("m-s%d", i), TokenHash: fmt.Sprintf("h-s%d", i), EnrolledAt: 1})
				if err != nil {
					return err
				}
				ids[i] = id
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var batch []record.Telemetry
		for i, id := range ids {
			ts := int64(1000)
			if i%2 == 1 {
				ts = 500 // seen before the cutoff below
			}
			batch = append(batch, record.Telemetry{AgentID: id, Seq: uint64(i + 1), TS: ts, Rates: []byte(`[]`), Counters: []byte(`[]`),
				Connections: []byte(fmt.Sprintf(`[{"remote_addr":"198.51.100.1:%d"}]`, i+1))})
		}
		if _, err := db.WriteTelemetry(ctx, batch); err != nil {
			t.Fatal(err)
		}
		seqs, err := db.AgentSeqs(ctx, 900)
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) != (n+1)/2 {
			t.Fatalf("%d agents seen since 900, want %d", len(seqs), (n+1)/2)
		}
		for k, s := range seqs {
			if s.ID != ids[2*k] || s.LastSeq != int64(2*k+1) {
				t.Fatalf("seqs[%d] = %+v, want agent %d seq %d", k, s, ids[2*k], 2*k+1)
			}
		}
		want := append([]int64{}, ids[:1100]...)
		invs, err := db.AgentInventories(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		if len(invs) != len(want) {
			t.Fatalf("%d inventories, want %d", len(invs), len(want))
		}
		for i, inv := range invs {
			conns := fmt.Sprintf(`[{"remote_addr":"198.51.100.1:%d"}]`, i+1)
			if inv.ID != ids[i] || inv.LastSeq != int64(i+1) || inv.Connections != conns || inv.Site != "" {
				t.Fatalf("inventory %d = %+v, want agent %d seq %d %s", i, inv, ids[i], i+1, conns)
			}
		}
		if invs, err := db.AgentInventories(ctx, nil); err != nil || len(invs) != 0 {
			t.Fatalf("no ids: %v %v", invs, err)
		}
	})
}
