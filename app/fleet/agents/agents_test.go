package agents

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"netmon/app/audit"
	"netmon/app/errs"
	"netmon/store"
	"netmon/store/storetest"
)

// roster records the agents the intake is told to forget.
type roster struct{ forgot []int64 }

func (r *roster) Forget(id int64) { r.forgot = append(r.forgot, id) }

// TestSiteScope: an agent of another site is NotFound for a site-bound
// caller, as one that does not exist; a delete tells the roster.
func TestSiteScope(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Unix(1_700_000_000, 0)
		var id int64
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			id, _, err = tx.CreateAgent(ctx, store.Agent{Name: "pc", Site: "paris", MachineID: "m", TokenHash: "h", EnrolledAt: now.Unix()})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		r := &roster{}
		s := New(slog.New(slog.DiscardHandler), Config{Interval: 30 * time.Second, Now: func() time.Time { return now }}, db, audit.Builder{}, r)
		by := store.AuditActor{Username: "op", Role: "site-admin", ActorType: "user"}
		tests := []struct {
			desc     string
			call     func() error
			wantKind errs.Kind
		}{
			{"detail from another site", func() error { _, err := s.AgentDetail(ctx, "lyon", id); return err }, errs.NotFound},
			{"detail of no agent", func() error { _, err := s.AgentDetail(ctx, "", id+100); return err }, errs.NotFound},
			{"rename from another site", func() error { _, err := s.RenameAgent(ctx, by, "lyon", id, "x"); return err }, errs.NotFound},
			{"rename to nothing", func() error { _, err := s.RenameAgent(ctx, by, "paris", id, " "); return err }, errs.Invalid},
			{"delete from another site", func() error { return s.DeleteAgent(ctx, by, "lyon", id) }, errs.NotFound},
			{"detail from its site", func() error { _, err := s.AgentDetail(ctx, "paris", id); return err }, errs.Internal},
			{"delete from its site", func() error { return s.DeleteAgent(ctx, by, "paris", id) }, errs.Internal},
			{"deleted", func() error { _, err := s.AgentDetail(ctx, "", id); return err }, errs.NotFound},
		}
		for _, tt := range tests {
			err := tt.call()
			if got := errs.KindOf(err); got != tt.wantKind || (err != nil) != (tt.wantKind != errs.Internal) {
				t.Errorf("%s: error %v (kind %v), want kind %v", tt.desc, err, got, tt.wantKind)
			}
		}
		if len(r.forgot) != 1 || r.forgot[0] != id {
			t.Errorf("roster told to forget %v, want [%d] (the one delete)", r.forgot, id)
		}
	})
}
