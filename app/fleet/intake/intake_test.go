package intake

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"netmon/app/secret"
	"netmon/store"
	"netmon/store/storetest"
)

// countingStore counts the token lookups that reach the database.
type countingStore struct {
	*store.DB
	lookups atomic.Int64
}

func (c *countingStore) AgentByTokenHash(ctx context.Context, hash string) (store.Agent, error) {
	c.lookups.Add(1)
	return c.DB.AgentByTokenHash(ctx, hash)
}

// TestWarm: a warmed intake resolves the tokens of agents
// enrolled before it started without asking the database; a forgotten
// (deleted or replaced) agent's token goes back to the database.
func TestWarm(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		var ids []int64
		for _, tok := range []string{"agt_one", "agt_two"} {
			err := db.InTx(ctx, func(tx *store.Tx) error {
				id, _, err := tx.CreateAgent(ctx, store.Agent{Name: tok, MachineID: tok, TokenHash: secret.Hash(tok), EnrolledAt: 1})
				ids = append(ids, id)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		cs := &countingStore{DB: db}
		s := New(slog.New(slog.DiscardHandler), Config{Interval: 30 * time.Second}, cs, nil)
		s.Warm(ctx)
		for i, tok := range []string{"agt_one", "agt_two"} {
			ref, err := s.Authenticate(ctx, tok, 0)
			if err != nil || ref.ID != ids[i] {
				t.Fatalf("%s: %+v %v", tok, ref, err)
			}
		}
		if n := cs.lookups.Load(); n != 0 {
			t.Errorf("%d token lookups reached the database after the warm-up, want 0", n)
		}
		if _, err := s.Authenticate(ctx, "agt_unknown", 0); err == nil {
			t.Error("an unknown token was accepted")
		}
		s.Forget(ids[0])
		if _, err := s.Authenticate(ctx, "agt_one", 0); err != nil {
			// Still in the database: resolved again, from the database.
			t.Fatalf("agt_one after forget: %v", err)
		}
		if n := cs.lookups.Load(); n != 2 {
			t.Errorf("%d lookups, want 2 (the unknown token and agt_one after forget)", n)
		}
	})
}
