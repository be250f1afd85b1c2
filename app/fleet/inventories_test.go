package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"netmon/alerting/rules"
	"netmon/store"
)

// seqStore is the database as Inventories reads it: the agents alive
// with their last seq, and their stored inventories.
type seqStore struct {
	AlertStore // the other reads are not called
	seqs       []store.AgentSeq
	reads      int // AgentInventories calls
}

func (s *seqStore) AgentSeqs(context.Context, int64) ([]store.AgentSeq, error) { return s.seqs, nil }

func (s *seqStore) AgentInventories(_ context.Context, ids []int64) ([]store.AgentInventory, error) {
	s.reads++
	var out []store.AgentInventory
	for _, id := range ids {
		for _, a := range s.seqs {
			if a.ID == id {
				out = append(out, store.AgentInventory{ID: id, Site: "a", LastSeq: a.LastSeq,
					Connections: `[{"remote_addr":"198.51.100.7:4444","status":"ESTABLISHED","process":"nc"},{"remote_addr":"*:*","status":"LISTEN"}]`})
			}
		}
	}
	return out, nil
}

// TestInventoriesOncePerBatch: an agent's batch is evaluated once, a new
// seq again, and an agent gone quiet is forgotten (its next batch is
// new); only established connections reach the rules.
func TestInventoriesOncePerBatch(t *testing.T) {
	db := &seqStore{}
	var inv inventories
	now := time.Unix(1_800_000_000, 0)
	one := []rules.Inventory{{AgentID: 1, Site: "a", Conns: []rules.Conn{{AgentID: 1, Site: "a", RemoteIP: "198.51.100.7", RemotePort: 4444, Process: "nc"}}}}
	steps := []struct {
		desc      string
		seqs      []store.AgentSeq
		want      []rules.Inventory
		wantReads int
	}{
		{desc: "first batch", seqs: []store.AgentSeq{{ID: 1, LastSeq: 1}}, want: one, wantReads: 1},
		{desc: "same batch: nothing, no read", seqs: []store.AgentSeq{{ID: 1, LastSeq: 1}}, want: []rules.Inventory{}, wantReads: 1},
		{desc: "next batch", seqs: []store.AgentSeq{{ID: 1, LastSeq: 2}}, want: one, wantReads: 2},
		{desc: "gone quiet", seqs: nil, want: []rules.Inventory{}, wantReads: 2},
		{desc: "back with the same seq: new to the rules", seqs: []store.AgentSeq{{ID: 1, LastSeq: 2}}, want: one, wantReads: 3},
	}
	for _, st := range steps {
		db.seqs = st.seqs
		got, err := inv.inventories(context.Background(), db, now)
		if err != nil {
			t.Fatalf("%s: %v", st.desc, err)
		}
		if diff := cmp.Diff(append([]rules.Inventory{}, got...), st.want); diff != "" {
			t.Errorf("%s (-got, +want):\n%s", st.desc, diff)
		}
		if db.reads != st.wantReads {
			t.Errorf("%s: %d inventory reads, want %d", st.desc, db.reads, st.wantReads)
		}
	}
}
