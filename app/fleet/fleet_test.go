package fleet

import (
	"context"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"netmon/app/audit"
	"netmon/store"
	"netmon/store/storetest"
)

// TestNew: the fleet builds over the database alone (what the admin
// commands use), registers every job's metrics once, and starts and
// stops with the archive off.
func TestNew(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		reg := prometheus.NewPedanticRegistry()
		cfg := DefaultConfig()
		cfg.Archive = false
		s := New(slog.New(slog.DiscardHandler), cfg, Deps{DB: db, Auditor: audit.Builder{}, Registry: reg})
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Stop() })
		created, err := s.CreateEnrollToken(context.Background(), Actor{Username: "admin", Role: "admin", ActorType: "user"}, EnrollTokenCreate{Name: "lab"})
		if err != nil || created.Token == "" {
			t.Fatalf("CreateEnrollToken = %+v, %v", created, err)
		}
		items, err := s.ListEnrollTokens(context.Background(), Actor{})
		if err != nil || len(items) != 1 || items[0].State != "active" {
			t.Errorf("ListEnrollTokens = %+v, %v", items, err)
		}
		if _, err := reg.Gather(); err != nil {
			t.Errorf("metrics: %v", err)
		}
		n := 0
		for _, cs := range [][]prometheus.Collector{s.enroll.Collectors(), s.intake.Collectors(), s.agents.Collectors()} {
			for _, c := range cs {
				if reg.Unregister(c) {
					n++
				}
			}
		}
		if n != 6 {
			t.Errorf("%d of the jobs' 6 collectors were registered", n)
		}
	})
}
